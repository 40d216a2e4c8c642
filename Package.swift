// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Lockstep",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Lockstep", targets: ["Lockstep"]),
        .library(name: "LockstepFiles", targets: ["LockstepFiles"]),
        .library(name: "LockstepJACK", targets: ["LockstepJACK"]),
        .library(name: "LockstepSession", targets: ["LockstepSession"]),
        .library(name: "LockstepSchema", targets: ["LockstepSchema"]),
        .library(name: "LockstepControl", targets: ["LockstepControl"]),
        .library(name: "LockstepOSC", targets: ["LockstepOSC"]),
        .library(name: "LockstepWeb", targets: ["LockstepWeb"]),
        .library(name: "LockstepShow", targets: ["LockstepShow"]),
        .library(name: "LockstepTimecode", targets: ["LockstepTimecode"]),
        .executable(name: "lockstep", targets: ["lockstep"]),
        // Apple's Audio Queue Services API (names, signatures, result codes) on the engine.
        .library(name: "AudioQueueCompat", targets: ["AudioQueueCompat"]),
        // The same for C and C++: liblockstep-audiotoolbox.so, Apple's AudioToolbox headers and a
        // pkg-config file (Docs/CAPI.md).
        .library(name: "lockstep-audiotoolbox", type: .dynamic, targets: ["LockstepAudioToolbox"]),
    ],
    dependencies: [
        // 1.8: options that also work bare (`--web` alone: defaultAsFlag).
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // Diagnostics of the CLI (--verbose, --quiet) and colour on terminals (honours NO_COLOR).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/onevcat/Rainbow", from: "4.0.0"),
        // The web cue page of `session run --web`: HTTP and WebSocket.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // Hummingbird's own transport: the web server answers bytes that are not HTTP with 400.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        // The link between a show's main and its backup: lines over TCP.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.30.0"),
    ],
    targets: [
        // The core: formats, buffers, queues, timeline, mixer, engine, offline device. Swift but
        // for a few C lines in CRealtime: inlined instructions Swift cannot emit (a cache
        // prefetch, a spin hint) and the scheduling flag promoted threads set.
        .target(name: "CRealtime"),
        // Release builds check the render path with @_noAllocation/@_noLocks; those checks need
        // optimisation, so a release build with -Onone (the test suite's) also defines
        // LOCKSTEP_UNOPTIMIZED to leave them out.
        .target(name: "Lockstep", dependencies: ["CRealtime"],
                swiftSettings: [.define("LOCKSTEP_REALTIME_CHECKS", .when(configuration: .release))],
                linkerSettings: [.linkedLibrary("m")]),
        // The JSON schema (version 1) of every --json output, --json-events line, OSC reply and
        // update: plain Codable types, Foundation only (Docs/JSON.md).
        .target(name: "LockstepSchema"),
        // Thin system-library shims.
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr",
                       providers: [.apt(["libsoxr-dev"])]),
        // libltc: SMPTE linear timecode frames and their audio (LTC out).
        .systemLibrary(name: "CLtc", pkgConfig: "ltc",
                       providers: [.apt(["libltc-dev"])]),
        .systemLibrary(name: "CLo", pkgConfig: "liblo",
                       providers: [.apt(["liblo-dev"])]),
        // terminfo (ncurses' libtinfo): how the terminal moves its cursor, for the CLI's live display.
        .systemLibrary(name: "CTinfo", pkgConfig: "tinfo",
                       providers: [.apt(["libncurses-dev"])]),
        // librsvg + cairo: the session timeline picture as PNG (session check --png).
        .systemLibrary(name: "CRsvg", pkgConfig: "librsvg-2.0",
                       providers: [.apt(["librsvg2-dev"])]),
        // FFmpeg's demuxers, muxers and codecs: compressed packets (MP3, AAC, ALAC, IMA4, …) for
        // AudioQueueCompat's Audio File, Audio File Stream and Audio Queue services.
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),
        // libjack, through a tiny C shim (jack_client_open is variadic).
        .target(name: "CJack", linkerSettings: [.linkedLibrary("jack")]),
        // The live device: one JACK client, its ports and callbacks.
        .target(name: "LockstepJACK", dependencies: ["Lockstep", "CJack", "CRealtime", "CSoxr"]),
        // Audio files (libsndfile), the file player and rate conversion (libsoxr).
        .target(name: "LockstepFiles", dependencies: ["Lockstep", "CSndfile", "CSoxr"]),
        // Timecode on the sample clock: SMPTE timecode, frame rates, LTC audio (libltc).
        .target(name: "LockstepTimecode", dependencies: ["CLtc"]),
        // Scripted playlist sessions: the YAML session file, its timeline, the session player.
        // The file is read event by event with libyaml, the CYaml module of Yams.
        .target(name: "LockstepSession", dependencies: [
            "Lockstep", "LockstepFiles", "LockstepTimecode", .product(name: "Yams", package: "Yams"),
        ]),
        // The one command path of every control surface: commands, the dispatcher, published updates.
        .target(name: "LockstepControl", dependencies: ["Lockstep", "LockstepFiles", "LockstepSession", "LockstepSchema"]),
        // OSC over UDP through liblo: QLab's address space mapped onto LockstepControl.
        .target(name: "LockstepOSC", dependencies: ["LockstepControl", "LockstepSession", "CLo"]),
        // The web cue page: the page (package resources, embedded in the code), its HTTP and
        // WebSocket server on LockstepControl, and the timeline picture as SVG.
        .target(name: "LockstepWeb", dependencies: [
            "Lockstep", "LockstepControl", "LockstepFiles", "LockstepSchema", "LockstepSession", "CRsvg",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
        ], resources: [.embedInCode("Resources/index.html"), .embedInCode("Resources/app.js"),
                       .embedInCode("Resources/style.css")]),
        // The show engine: files as layers (`play`) and sessions (`session run`) played live
        // through one JACK client — transport, rate changes, recording, end and fade-out.
        .target(name: "LockstepShow", dependencies: [
            "Lockstep", "LockstepFiles", "LockstepJACK", "LockstepSession", "LockstepTimecode",
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOExtras", package: "swift-nio-extras"),
        ]),
        // Starting a child the kernel stops when the CLI goes, however it goes (PR_SET_PDEATHSIG).
        .target(name: "CSpawn"),
        // The command-line tool.
        .executableTarget(name: "lockstep", dependencies: [
            "Lockstep", "LockstepFiles", "LockstepJACK", "LockstepSession", "LockstepControl", "LockstepOSC", "LockstepWeb", "LockstepSchema", "LockstepShow", "LockstepTimecode", "CSpawn", "CTinfo",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Rainbow", package: "Rainbow"),
            .product(name: "Yams", package: "Yams"),
        ]),
        // Examples (compiled in CI).
        .executableTarget(name: "LayeredRender", dependencies: ["Lockstep", "LockstepFiles"],
                          path: "Examples/LayeredRender"),
        .executableTarget(name: "LiveShow", dependencies: ["Lockstep", "LockstepJACK", "LockstepSession", "LockstepShow"],
                          path: "Examples/LiveShow"),
        // Shared test helpers: signal generators, offline driving, audio assertions.
        .target(name: "LockstepTestSupport", dependencies: ["Lockstep", "LockstepFiles", "LockstepSession", "LockstepOSC", "CJack", "CLo"],
                path: "Tests/LockstepTestSupport"),
        .testTarget(name: "LockstepTests", dependencies: ["Lockstep", "LockstepTestSupport"]),
        .testTarget(name: "LockstepFilesTests",
                    dependencies: ["Lockstep", "LockstepFiles", "LockstepTestSupport"]),
        // The live tests (suites in `JACKTests`). The GO latency tests, which need the web server
        // (Hummingbird, the last modules built), are a target of their own: the bigger one then
        // compiles while those are built.
        .testTarget(name: "LockstepJACKTests",
                    dependencies: ["Lockstep", "LockstepJACK", "LockstepFiles", "LockstepOSC", "LockstepSchema", "LockstepSession", "LockstepShow", "LockstepTimecode", "LockstepTestSupport", "CJack"]),
        .testTarget(name: "LockstepGoLatencyTests",
                    dependencies: ["Lockstep", "LockstepJACK", "LockstepControl", "LockstepFiles", "LockstepOSC", "LockstepSchema", "LockstepSession", "LockstepShow", "LockstepWeb", "LockstepTestSupport", "CJack"]),
        .testTarget(name: "LockstepSessionTests",
                    dependencies: ["Lockstep", "LockstepFiles", "LockstepSession", "LockstepTestSupport"]),
        .testTarget(name: "LockstepTimecodeTests",
                    dependencies: ["Lockstep", "LockstepTimecode", "LockstepTestSupport", "CLtc"]),
        .testTarget(name: "LockstepControlTests",
                    dependencies: ["Lockstep", "LockstepFiles", "LockstepSession", "LockstepControl", "LockstepTestSupport"]),
        .testTarget(name: "LockstepOSCTests",
                    dependencies: ["LockstepOSC", "LockstepControl", "LockstepSession", "LockstepTestSupport"]),
        .testTarget(name: "LockstepWebTests",
                    dependencies: ["LockstepWeb", "LockstepControl", "LockstepSession", "LockstepTestSupport", "CRsvg"]),
        .testTarget(name: "CLITests", dependencies: ["LockstepFiles", "LockstepOSC", "LockstepSchema", "LockstepTestSupport"]),
        // Audio Queue Services compatibility: Apple's C API names on the engine, its examples
        // (ports of the seed listings, compiled in CI and run by the tests) and its tests.
        .target(name: "CAudioQueueTypes"),
        .target(name: "AudioQueueCompat", dependencies: ["CAudioQueueTypes", "CFFmpeg", "Lockstep", "LockstepFiles", "LockstepJACK"]),
        // The C API: AudioQueueCompat exported with @_cdecl; its headers (include/, Apple's layout)
        // are installed, not compiled here.
        .target(name: "LockstepAudioToolbox", dependencies: ["AudioQueueCompat"], exclude: ["include"]),
        .target(name: "AQExampleSupport", dependencies: ["AudioQueueCompat"], path: "Examples/AQExampleSupport"),
        .executableTarget(name: "AQRecorder", dependencies: ["AudioQueueCompat", "AQExampleSupport", "LockstepJACK"],
                          path: "Examples/AQRecorder"),
        .executableTarget(name: "AQPlayer", dependencies: ["AudioQueueCompat", "AQExampleSupport", "LockstepJACK"],
                          path: "Examples/AQPlayer"),
        .executableTarget(name: "AQVoiceMeter", dependencies: ["AudioQueueCompat", "AQExampleSupport", "Lockstep"],
                          path: "Examples/AQVoiceMeter"),
        .executableTarget(name: "AQSimultaneous",
                          dependencies: ["AudioQueueCompat", "AQExampleSupport", "Lockstep", "LockstepFiles"],
                          path: "Examples/AQSimultaneous"),
        .executableTarget(name: "AQOfflineRender", dependencies: ["AudioQueueCompat", "AQExampleSupport"],
                          path: "Examples/AQOfflineRender"),
        .testTarget(name: "AudioQueueCompatTests",
                    dependencies: ["AudioQueueCompat", "Lockstep", "LockstepFiles", "LockstepJACK", "LockstepTestSupport", "CJack"]),
    ],
    swiftLanguageModes: [.v6]
)
