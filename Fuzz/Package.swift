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
        // What every control target asserts of a command: in range, convertible without a trap.
        .target(name: "FuzzSupport", dependencies: [
            .product(name: "LockstepControl", package: "Lockstep"),
        ]),
        // OSC packets: liblo's message and bundle decoders, QLab's address space, the arguments.
        .target(name: "OSCFuzz", dependencies: [
            "FuzzSupport", .product(name: "LockstepOSC", package: "Lockstep"),
        ]),
        // Typed control lines (--control): ControlLine.
        .target(name: "ControlFuzz", dependencies: ["FuzzSupport"]),
        // The web page's commands (WebSocket messages, POST bodies): WebCommand.
        .target(name: "WebCommandFuzz", dependencies: ["FuzzSupport"]),
        // Every time, sample count, gain, ramp and channel map parser, and numeric arguments.
        .target(name: "NumbersFuzz", dependencies: [
            .product(name: "LockstepSession", package: "Lockstep"),
            .product(name: "LockstepFiles", package: "Lockstep"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
