// swift-tools-version: 6.1
// Lockstep's libFuzzer targets: a separate package so `swift build` and `swift test` of the main
// package never build them. Build and run them with `Scripts/fuzz.sh` (Docs/Development.md):
// it builds this package with `-sanitize=fuzzer,address` in `.build-fuzz/` and links each target
// with libFuzzer.
//
// Each target is a library holding `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.
import PackageDescription

let package = Package(
    name: "LockstepFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Lockstep", path: ".."),
    ],
    targets: [
        // Session files: the YAML reader, the parser, the audio files they name and the timeline.
        .target(name: "SessionFuzz", dependencies: [
            .product(name: "LockstepSession", package: "Lockstep"),
            .product(name: "LockstepFiles", package: "Lockstep"),
        ]),
        // Audio files: AudioFileReader opening, reading, seeking and scanning arbitrary bytes.
        .target(name: "AudioFileFuzz", dependencies: [
            .product(name: "LockstepFiles", package: "Lockstep"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
