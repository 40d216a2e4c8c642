// The JSON writer every reply, update, status line and web push goes through
// (`ControlValue.json`), on a value the size of the web page's state among 4096 layers.
//
// `Scripts/bench.sh` part 12 reads its p50 and p99 against a target of 50 ms: the writer once
// copied its whole output for each string it appended, and this state took 0.46-0.58 s, five
// times a second (issue 28). Beside it: a GO's reply, and a GO from the web page parsed
// (`WebCommand.parse`, on the event loop before the GO is carried out: part of the web GO's
// latency).

import Benchmark
import LockstepControl
import LockstepSchema

/// A state of `layers` layers in the shape of the web page's: per layer its name, file, gain,
/// meters and state, strings with escapes and non-ASCII letters among them; cues besides.
func webState(layers: Int) -> ControlValue {
    var layerValues: [ControlValue] = []
    for index in 0..<layers {
        var layer: [String: ControlValue] = [:]
        layer["name"] = .string("layer \(index)")
        layer["file"] = .string("stems/take \"\(index % 7)\" é.wav")
        layer["gainDB"] = .number(-3.5 - Double(index % 12))
        layer["peakDB"] = .number(-12.25 - Double(index % 30) / 4)
        layer["rmsDB"] = .number(-18.5 - Double(index % 20) / 8)
        layer["state"] = .string(index % 3 == 0 ? "playing" : "waiting")
        layer["ports"] = .array([.string("system:playback_\(index % 2 + 1)")])
        layerValues.append(.object(layer))
    }
    var cues: [ControlValue] = []
    for index in 0..<256 {
        var cue: [String: ControlValue] = [:]
        cue["name"] = .string("cue \(index)")
        cue["number"] = .integer(Int64(index + 1))
        cue["layer"] = .string("layer \(index)")
        cue["state"] = .string("waiting")
        cue["notes"] = .string("line one\nline two\ttabbed")
        cues.append(.object(cue))
    }
    var state: [String: ControlValue] = [:]
    state["layers"] = .array(layerValues)
    state["cues"] = .array(cues)
    state["position"] = .integer(123_456_789)
    state["state"] = .string("playing")
    state["playhead"] = .string("cue 1")
    return .object(state)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput],
        timeUnits: .nanoseconds,
        warmupIterations: 3,
        scalingFactor: .one,
        maxDuration: .seconds(10),
        maxIterations: 200
    )
    let state = webState(layers: 4096)
    let size = state.json.utf8.count
    Benchmark("control JSON: the web state of 4096 layers (\(size / 1000) kB)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(state.json) }
    }
    let reply = ControlValue.object(["cue": .string("bell"), "position": .integer(48000), "sampleTime": .integer(96_000),
                                     "seconds": .number(1), "playhead": .string("horn \"2\""), "placed": .array([.string("bell")])])
    Benchmark("control JSON: a GO's reply", configuration: .init(maxIterations: 100_000)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(reply.json) }
    }
    Benchmark("control JSON: a web GO parsed", configuration: .init(maxIterations: 100_000)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try? WebCommand.parse(#"{"command":"go","cue":"bell"}"#)) }
    }
}
