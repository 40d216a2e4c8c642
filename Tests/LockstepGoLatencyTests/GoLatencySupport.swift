import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSchema
import LockstepSession
import LockstepShow
import LockstepTestSupport
import Testing

/// What the GO latency tests (typed, MIDI, OSC) share: a session of a bed and `count` manual
/// hits (and `LOCKSTEP_GO_LAYERS` more layers looping silence, at most 4094 — the engine holds
/// 4096 queues — to measure a GO among thousands of layers; a debug build cannot compute that many
/// in time: run the tests with `-c release`), played by the show engine as `session run` plays it (layers
/// computed ahead on streamer threads), a live device at period 256 with a capture of its
/// output, the check that every hit sounds on its reported sample, and the percentiles they print.
struct GoLatencyRig {
    let temp: TemporaryTestDirectory
    let session: Session
    let server: JACKServer
    let device: JACKDevice
    let show: LiveSession
    let capture: JACKCapture
    var engine: Engine { show.engine }
    var player: SessionPlayer { show.player }

    /// Layers looping silence besides the bed and the hits (LOCKSTEP_GO_LAYERS, default 0).
    static let extraLayers = Int(ProcessInfo.processInfo.environment["LOCKSTEP_GO_LAYERS"] ?? "") ?? 0

    /// The bed's level and the level of a hit over it.
    static let bed: Float = 0.125
    static let hit: Float = 0.625

    /// Starts a private server, the device (`client`, with `midiInput` when given), a capture of
    /// its first output, and the session (`extra` appended to its text) playing.
    init(count: Int, client: String, midiInput: String? = nil, extra more: String = "") throws {
        temp = try TemporaryTestDirectory(prefix: client)
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(Self.bed, frames: 48000 * 60), format: format)
        try FileFixtures.writeWAV(path: temp.file("hit.wav"), samples: Signals.impulse(at: 0, frames: 16, value: 0.5), format: format)
        let extra = (0..<Self.extraLayers).map { "s\($0 + 1)" }
        var text = "channels: 1\nlayers: { \((["bed", "fx"] + extra).map { "\($0): {}" }.joined(separator: ", ")) }\ncues:\n"
        text += "  - { name: bed, layer: bed, file: bed.wav, at: 0 }\n"
        for n in 1...count { text += "  - { name: c\(n), layer: fx, file: hit.wav, at: manual }\n" }
        if !extra.isEmpty {
            try FileFixtures.writeWAV(path: temp.file("silence.wav"), samples: Signals.constant(0, frames: 48000), format: format)
            for name in extra { text += "  - { name: \(name), layer: \(name), file: silence.wav, at: 0, loop: forever }\n" }
        }
        try FileFixtures.writeText(path: temp.file("go.yaml"), text + more)
        session = try Session.load(path: temp.file("go.yaml"))

        server = try JACKServer(period: 256)
        device = try JACKDevice(options: .init(clientName: client, serverName: server.name,
                                               connectToPhysicalOutputs: false, midiInputPortName: midiInput))
        show = try LiveSession(session: session, device: device)
        capture = try JACKCapture(server: server, sources: [device.outputPortNames[0]], maxSeconds: Double(count) * 0.2 + 8)
        try capture.start()
        #expect(capture.waitForFrames(2048, timeout: 5))
        try show.start()
    }

    /// Waits until the bed sounds in the capture: the session plays.
    func waitForBed() {
        #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 0) != nil })
    }

    /// Waits until the capture holds 2048 frames past device sample `last`.
    func waitForCapture(past last: Int64) {
        let target = device.jackFrameTime(forSampleTime: last + 2048)
        #expect(capture.wait(timeout: 10) { capture.currentFrameTime.map { Int32(bitPattern: $0 &- target) > 0 } ?? false })
    }

    /// Checks that a hit sounds over the bed exactly on device sample `at`.
    func expectHit(at: Int64, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let live = capture.channel(0)
        let index = try #require(capture.recordedIndex(atFrameTime: Int64(device.jackFrameTime(forSampleTime: at))),
                                 sourceLocation: sourceLocation)
        #expect(live[index - 1] == Self.bed && live[index] == Self.hit && live[index + 1] == Self.bed,
                "the GO reported for device sample \(at) does not sound there: \(live[(index - 2)...(index + 2)]); capture xruns \(capture.xrunCount), engine discontinuities \(engine.discontinuities.prefix(4)), late starts \(player.lateStarts.prefix(4)), hits around it \(live.indices.filter { live[$0] == Self.hit && abs($0 - index) < 48000 }.map { $0 - index })",
                sourceLocation: sourceLocation)
    }

    /// Checks that nothing underran.
    func expectNoUnderrun(sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        #expect(!engine.discontinuities.contains { $0.kind == .underrun }, "\(engine.discontinuities)", sourceLocation: sourceLocation)
    }

    /// Sends `count` GOs with `go` (which returns the device sample its reply names), 20 to 60 ms
    /// apart so that they leave at any phase of the period; for each, the frames from the send to
    /// that sample, from the reply's return to it (the command was carried out before), the
    /// sample, and the start of the device's cycle under way when it was sent. Send and return
    /// are read on JACK's host clock, translated to the device's frames: JACK's estimate, which
    /// a late cycle can shift by a few periods for a while (a CI run measured a GO −317 frames
    /// "before" its send), so it gives the latencies printed and the exact check is
    /// ``landAfterSend(_:begun:period:)``.
    func sendGoes(_ count: Int, _ go: () throws -> Int64) throws -> (leads: [Int64], afterReply: [Int64], starts: [Int64], begun: [Int64]) {
        var leads: [Int64] = [], afterReply: [Int64] = [], starts: [Int64] = [], begun: [Int64] = []
        var generator = SystemRandomNumberGenerator()
        for _ in 1...count {
            usleep(UInt32.random(in: 20_000...60_000, using: &generator))
            begun.append(try #require(device.latestCycleStart))
            let sent = device.sampleTime(forHostTime: jack_get_time())
            let at = try go()
            let answered = device.sampleTime(forHostTime: jack_get_time())
            leads.append(at - sent)
            afterReply.append(at - answered)
            starts.append(at)
        }
        return (leads, afterReply, starts, begun)
    }

    /// What a GO sent from outside (OSC, WebSocket) is checked for, once `sendGoes` is done and
    /// the capture holds the last: stops the player and the capture; sets `xrun` first (an xrun
    /// breaks the capture's timeline and the clock estimate); then every GO sounds in a cycle
    /// that began after its send and within two periods of its reply (the command was carried
    /// out before the reply; the way in adds its own delay on top, reported but not bounded),
    /// nothing underran, and every hit is on its sample. Returns the period and the percentiles
    /// of the frames from each send to its first sample.
    func stopAndCheck(leads: [Int64], afterReply: [Int64], starts: [Int64], begun: [Int64], xrun: XrunFlag,
                      sourceLocation: Testing.SourceLocation = #_sourceLocation) throws
        -> (period: Int64, p50: Int64, p99: Int64, max: Int64) {
        player.stop()
        capture.stop()
        let period = Int64(device.periodFrames)
        xrun.set(capture.xrunCount > 0 || engine.discontinuities.contains { $0.kind == .xrun })
        #expect(Self.landAfterSend(starts, begun: begun, period: period), "\(Array(zip(starts, begun)))", sourceLocation: sourceLocation)
        #expect(afterReply.allSatisfy { $0 <= 2 * period }, "\(afterReply)", sourceLocation: sourceLocation)
        expectNoUnderrun(sourceLocation: sourceLocation)
        for at in starts { try expectHit(at: at, sourceLocation: sourceLocation) }
        let (p50, p99, most) = Self.percentiles(leads)
        return (period, p50, p99, most)
    }

    /// Whether every GO sounds in a cycle that began after it was sent: on or after the start of
    /// the cycle following the one under way at the send (read from the device's own counter).
    static func landAfterSend(_ starts: [Int64], begun: [Int64], period: Int64) -> Bool {
        zip(starts, begun).allSatisfy { $0 >= $1 + period }
    }

    /// `frames` at 48 kHz in milliseconds, two decimals.
    static func ms(_ frames: Int64) -> String { String(format: "%.2f", Double(frames) * 1000 / 48000) }

    /// The median, the 99th percentile and the largest of `values` (not empty), as the OSC
    /// server's statistics compute them (``OSCStatistics/GoLatency``).
    static func percentiles(_ values: [Int64]) -> (p50: Int64, p99: Int64, max: Int64) {
        guard let summary = OSCStatistics.GoLatency(values) else { return (0, 0, 0) }
        return (summary.p50Frames, summary.p99Frames, summary.maxFrames)
    }
}
