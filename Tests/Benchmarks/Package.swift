// swift-tools-version: 6.1
// Lockstep's benchmarks: a separate package so the main package and CI never build
// ordo-one/benchmark. Run them with `Scripts/bench.sh` (or, from this folder,
// `swift package benchmark --target RenderBenchmark` or `--target ControlJSONBenchmark`).
import PackageDescription

let package = Package(
    name: "LockstepBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Lockstep", path: "../.."),
        // Only the malloc counter: the default "RuntimeInterposer" trait (ARC counters on Linux
        // with Swift 6.3) needs ordo-one/swift-runtime-interposer, which we don't use.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "RenderBenchmark",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Lockstep", package: "Lockstep"),
            ],
            path: "Benchmarks/RenderBenchmark",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ControlJSONBenchmark",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "LockstepSchema", package: "Lockstep"),
                .product(name: "LockstepControl", package: "Lockstep"),
            ],
            path: "Benchmarks/ControlJSONBenchmark",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
