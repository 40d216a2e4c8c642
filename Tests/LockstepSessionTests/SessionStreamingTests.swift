import CRealtime
import Foundation
import Lockstep
import LockstepFiles
@testable import LockstepSession
import LockstepTestSupport
import Synchronization
import Testing

/// The threads that read sources.
private final class ThreadLog: Sendable {
    let threads = Mutex<Set<UInt>>([])
}

/// A file reader that notes the threads reading it.
private final class TracingSource: AudioSource {
    let reader: AudioFileReader
    let log: ThreadLog

    init(_ path: String, log: ThreadLog) throws(FileError) {
        reader = try AudioFileReader(path: path, truncation: .reject)
        self.log = log
    }

    var path: String { reader.path }
    var format: StreamFormat { reader.format }
    var frameCount: Int64 { reader.frameCount }
    var truncationError: FileError? { reader.truncationError }
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(FileError) -> Int {
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        log.threads.withLock { _ = $0.insert(me) }
        return try reader.read(into: buffer, frames: frames)
    }
    func seek(toFrame frame: Int64) throws(FileError) { try reader.seek(toFrame: frame) }
    func close() { reader.close() }
}

@Suite("Session layers on the streamer: computed ahead on its threads, live equal to offline")
struct SessionStreamingTests {
    static let session = """
        channels: 2
        layers: { bed: {}, pad: {}, fx: {} }
        cues:
          - { name: bed, layer: bed, file: bed.wav, at: 0, loop: forever }
          - { name: pad, layer: pad, file: pad44.wav, at: 0.1, loop: forever }
          - { name: bell, layer: fx, file: bell.wav, at: manual }
        """

    /// Writes the session's audio: a 48 kHz bed, a 44.1 kHz pad (converted) and a bell.
    static func fixture() throws -> (SessionFixture, String) {
        let fixture = try SessionFixture()
        try fixture.audio("bed.wav", Signals.sine(frequency: 220, sampleRate: 48000, frames: 24000, amplitude: 0.2))
        try fixture.audio("pad44.wav", Signals.sine(frequency: 330, sampleRate: 44100, frames: 30000, amplitude: 0.2), rate: 44100)
        try fixture.audio("bell.wav", Signals.sine(frequency: 880, sampleRate: 48000, frames: 6000, amplitude: 0.3))
        return (fixture, try fixture.session(session))
    }

    @Test("files are read (and converted) on the streamer's threads, never the engine's callback thread; GO, gain and stop land on their samples, exactly as offline")
    func liveEqualsOffline() throws {
        let (fixture, path) = try Self.fixture()
        let session = try Session.load(path: path)
        let device = ThreadedTestDevice(sampleRate: 48000, channels: 2, period: 256)
        let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
        let readers = ThreadLog()
        let streamer = FileStreamer(name: "test.layers", threads: 2)
        defer { streamer.stop() }
        let player = try SessionPlayer(session: session, engine: engine, bufferCount: 16, streamer: streamer,
                                       sources: { path throws(FileError) in try TracingSource(path, log: readers) })
        try device.start()
        defer { device.stop() }
        let callbackThread = Mutex<UInt?>(nil)
        engine.performOnCallbackThread { callbackThread.withLock { $0 = UInt(bitPattern: Int(bitPattern: pthread_self())) } }
        let origin = try player.start(from: 0, lead: 0.05)
        // Reads from here on are the streamer's: the first buffers were computed by this thread.
        let mine = UInt(bitPattern: Int(bitPattern: pthread_self()))
        readers.threads.withLock { $0.removeAll() }
        // Commands placed 0.25 s ahead of what plays: each lands exactly where it is placed.
        func ahead() -> Int64 { player.position + 12_000 }
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= 9_600 })
        let goAt = ahead()
        let go = try player.go("bell", at: goAt)
        #expect(go.start == goAt)
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= goAt })
        let gainAt = ahead()
        #expect(try player.setGain(layer: "bed", decibels: -12, ramp: 0.05, at: gainAt) == gainAt)
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= gainAt })
        let stopAt = ahead()
        #expect(try player.stopCue("pad", at: stopAt).start == stopAt)
        let end = stopAt + 9_600
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= end + 2_048 })
        let live = device.output
        player.stop()

        let callback = try #require(callbackThread.withLock { $0 })
        let threads = readers.threads.withLock { $0 }
        #expect(!threads.isEmpty, "no cue was read while playing")
        #expect(!threads.contains(callback), "a file was read on the engine's callback thread")
        #expect(!threads.contains(mine))
        #expect(engine.discontinuities.isEmpty, "\(engine.discontinuities)")
        #expect(player.lateStarts.isEmpty, "\(player.lateStarts)")

        // The same commands offline, on the same samples.
        let offlineDevice = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2), maximumFramesPerRender: 256)
        let offlineEngine = try Engine(device: offlineDevice, rateConverter: SoxrRateConverter.factory)
        let offline = try SessionPlayer(session: try Session.load(path: path), engine: offlineEngine)
        try offline.start(from: 0, at: 0)
        var expected: [Float] = []
        var commands: [(Int64, () throws -> Void)] = [
            (goAt, { _ = try offline.go("bell", at: goAt) }),
            (gainAt, { _ = try offline.setGain(layer: "bed", decibels: -12, ramp: 0.05, at: gainAt) }),
            (stopAt, { _ = try offline.stopCue("pad", at: stopAt) }),
        ]
        while Int64(expected.count / 2) < end {
            // Each command a little ahead of its sample, as live.
            while let (sample, command) = commands.first, sample - Int64(expected.count / 2) < 2_048 {
                try command()
                commands.removeFirst()
            }
            expected += try offlineDevice.renderFloat(frames: 256)
        }
        let heard = Array(live[Int(origin * 2)..<Int((origin + end) * 2)])
        let differing = heard.indices.filter { heard[$0] != expected[$0] }
        #expect(differing.isEmpty, "\(differing.count) samples differ from the offline render, the first at frame \((differing.first ?? 0) / 2)")
        _ = fixture
    }

    @Test("two changes on one layer with no buffer coming back (the engine's callback thread and the streamer's ordinary thread held up): the second, finding no spare, plays on buffers added to its layer, on its sample, as offline")
    func changesWhileNothingComesBack() throws {
        let fixture = try SessionFixture()
        _ = try fixture.audio("low.wav", Signals.constant(0.25, frames: 48000))
        _ = try fixture.audio("high.wav", Signals.constant(0.5, frames: 48000))
        let text = "channels: 1\nlayers: { fx: {} }\ncues:\n  - { name: low, layer: fx, file: low.wav, at: manual }\n  - { name: high, layer: fx, file: high.wav, at: manual }\n"
        let path = try fixture.session(text)
        let device = ThreadedTestDevice(sampleRate: 48000, channels: 1, period: 256)
        let engine = try Engine(device: device)
        let streamer = FileStreamer(name: "test.changes", threads: 1)
        defer { streamer.stop() }
        // Buffers of 8192 frames: a change's piece and buffer cover 176 ms after it.
        let player = try SessionPlayer(session: try Session.load(path: path), engine: engine, bufferFrames: 8192,
                                       bufferCount: 4, streamer: streamer)
        try device.start()
        defer { device.stop() }
        let origin = try player.start(from: 0, lead: 0.05)
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= 9_600 })
        // Nothing handed back is seen until both are let go: the first change takes both spares.
        let gate = DispatchSemaphore(value: 0)
        engine.performOnCallbackThread { gate.wait() }
        streamer.submit(lane: 0) { gate.wait() }
        let lowAt = player.position + 4_800, highAt = lowAt + 4_800
        #expect(try player.go("low", at: lowAt).start == lowAt)
        #expect(try player.go("high", at: highAt).start == highAt)
        // Held until past the second change's sample (not past what it computed).
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= highAt + 2_400 })
        gate.signal()
        gate.signal()
        let end = highAt + 24_000
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= end })
        let live = device.output
        player.stop()
        #expect(!engine.discontinuities.contains { $0.kind == .underrun }, "\(engine.discontinuities)")
        #expect(player.lateStarts.isEmpty, "\(player.lateStarts)")

        let offlineDevice = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 1), maximumFramesPerRender: 256)
        let offline = try SessionPlayer(session: try Session.load(path: path), engine: try Engine(device: offlineDevice))
        try offline.start(from: 0, at: 0)
        _ = try offline.go("low", at: lowAt)
        _ = try offline.go("high", at: highAt)
        var expected: [Float] = []
        while Int64(expected.count) < end { expected += try offlineDevice.renderFloat(frames: 256) }
        let heard = Array(live[Int(origin)..<Int(origin + end)])
        let differing = heard.indices.filter { heard[$0] != expected[$0] }
        #expect(differing.isEmpty, "\(differing.count) samples differ from the offline render, the first at session sample \(differing.first ?? 0) (changes at \(lowAt) and \(highAt))")
    }
}

@Suite("The armed standby cue on the streamer")
struct StandbyStreamingTests {
    /// Waits until the standby cue armed is `cue` (its index), armed for a cycle at least: on a
    /// loaded machine the lane that arms it may take longer than the GOs' spacing (the test is
    /// about where each GO's audio comes from, not how fast the lane is).
    static func waitUntilArmed(_ player: SessionPlayer, cue: Int) -> Bool {
        ThreadedTestDevice.wait(timeout: 10) {
            player.state.withLock { $0.arming.cue == cue && !$0.arming.armedTimes.isEmpty }
        }
    }

    @Test("GOs of the armed cue in quick succession, the streamer's ordinary thread held up: each one's layer plays on from the spares the buffers it cut left, computed on the thread of urgent work")
    func goesWhileOrdinaryThreadHeld() throws {
        let fixture = try SessionFixture()
        _ = try fixture.audio("hit.wav", Signals.constant(0.25, frames: 48000))
        var text = "channels: 1\nlayers: { fx: {} }\ncues:\n"
        for n in 1...6 { text += "  - { name: c\(n), layer: fx, file: hit.wav, at: manual }\n" }
        let session = try Session.load(path: try fixture.session(text))
        let device = ThreadedTestDevice(sampleRate: 48000, channels: 1, period: 256)
        let engine = try Engine(device: device)
        let streamer = FileStreamer(name: "test.standby", threads: 1)
        defer { streamer.stop() }
        // Pieces of 4096 frames (85 ms): each GO leaves its layer 256 ms computed.
        let player = try SessionPlayer(session: session, engine: engine, bufferFrames: 4096, bufferCount: 4, streamer: streamer)
        try device.start()
        defer { device.stop() }
        _ = try player.start(from: 0, lead: 0.05)
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= 9_600 })
        // The ordinary thread held: buffers handed back are not refilled meanwhile.
        let gate = DispatchSemaphore(value: 0)
        streamer.submit(lane: 0) { gate.wait() }
        for cue in 0..<6 {
            #expect(Self.waitUntilArmed(player, cue: cue), "c\(cue + 1) was never armed")
            _ = try player.go()
            usleep(30_000)
        }
        // Longer than a fired piece: the last GO's layer plays on only from what was computed
        // after it into its spares.
        usleep(150_000)
        gate.signal()
        let end = player.position + 24_000
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= end })
        player.stop()
        #expect(player.standbyStatistics.armed == 6, "\(player.standbyStatistics)")
        #expect(!engine.discontinuities.contains { $0.kind == .underrun }, "\(engine.discontinuities)")
    }

    @Test("the next cue is armed after a GO though the thread that arms it runs the moment it is asked (realtime, on the GO's processor) and no buffer comes back: it arms once the GO has let go of its lock")
    func armedAfterGoPreemptedByItsLane() throws {
        let fixture = try SessionFixture()
        _ = try fixture.audio("hit.wav", Signals.constant(0.25, frames: 48000))
        let session = try Session.load(path: try fixture.session("channels: 1\nlayers: { fx: {} }\ncues:\n  - { name: c1, layer: fx, file: hit.wav, at: manual }\n  - { name: c2, layer: fx, file: hit.wav, at: manual }\n"))
        let device = ThreadedTestDevice(sampleRate: 48000, channels: 1, period: 256)
        let engine = try Engine(device: device)
        let streamer = FileStreamer(name: "test.standby", threads: 1)
        defer { streamer.stop() }
        // The lane's urgent thread preempts the GO's thread as soon as the GO submits work to it.
        let promoted = Mutex(false)
        streamer.runOnUrgentThreads { promoted.withLock { $0 = Self.pinToFirstProcessor(realtime: true) } }
        let player = try SessionPlayer(session: session, engine: engine, bufferFrames: 4096, bufferCount: 4, streamer: streamer)
        try device.start()
        defer { device.stop() }
        _ = try player.start(from: 0, lead: 0.05)
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= 9_600 })
        try #require(promoted.withLock { $0 }, "the urgent thread could not be given SCHED_FIFO on processor 0 (needs root or an rtprio limit)")
        #expect(Self.waitUntilArmed(player, cue: 0), "c1 was never armed")
        // No arming buffer comes back (the disarmed pieces of c1 would arm c2 again).
        let gate = DispatchSemaphore(value: 0)
        engine.performOnCallbackThread { gate.wait() }
        let held = Mutex(true)
        func release() { if held.withLock({ let was = $0; $0 = false; return was }) { gate.signal() } }
        defer { release() }
        let went = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<SessionPlayer.GoResult, any Error>?>(nil)
        Thread {
            _ = Self.pinToFirstProcessor(realtime: false)
            outcome.withLock { $0 = Result { try player.go() } }
            went.signal()
        }.start()
        #expect(went.wait(timeout: .now() + 10) == .success)
        _ = try #require(outcome.withLock { $0 }).get()
        #expect(ThreadedTestDevice.wait(timeout: 2) {
            player.state.withLock { $0.arming.cue == 1 && !$0.arming.armedTimes.isEmpty }
        }, "c2 was not armed after the GO of c1: \(player.state.withLock { ($0.arming.cue, $0.arming.armedTimes.count) })")
        release()
        player.stop()
        #expect(player.standbyStatistics.armed == 1, "\(player.standbyStatistics)")
    }

    /// Pins the calling thread to processor 0 and, with `realtime`, gives it `SCHED_FIFO` 1.
    static func pinToFirstProcessor(realtime: Bool) -> Bool {
        guard lockstep_pin_current_thread(0) == 0 else { return false }
        guard realtime else { return true }
        var parameter = sched_param(sched_priority: 1)
        return sched_setscheduler(0, SCHED_FIFO, &parameter) == 0
    }

    @Test("two GOs 30 ms apart with no buffer coming back (the engine's callback thread and the streamer's ordinary thread held up): the second is armed from buffers of its own, and its layer plays on from buffers added to it")
    func goesWhileNothingComesBack() throws {
        let fixture = try SessionFixture()
        _ = try fixture.audio("hit.wav", Signals.constant(0.25, frames: 48000))
        let session = try Session.load(path: try fixture.session("channels: 1\nlayers: { fx: {} }\ncues:\n  - { name: c1, layer: fx, file: hit.wav, at: manual }\n  - { name: c2, layer: fx, file: hit.wav, at: manual }\n"))
        let device = ThreadedTestDevice(sampleRate: 48000, channels: 1, period: 256)
        let engine = try Engine(device: device)
        let streamer = FileStreamer(name: "test.standby", threads: 1)
        defer { streamer.stop() }
        let player = try SessionPlayer(session: session, engine: engine, bufferFrames: 4096, bufferCount: 4, streamer: streamer)
        try device.start()
        defer { device.stop() }
        _ = try player.start(from: 0, lead: 0.05)
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= 9_600 })
        // Nothing handed back is seen until both are let go: no spare, no arming buffer.
        let gate = DispatchSemaphore(value: 0)
        engine.performOnCallbackThread { gate.wait() }
        streamer.submit(lane: 0) { gate.wait() }
        #expect(Self.waitUntilArmed(player, cue: 0), "c1 was never armed")
        _ = try player.go()
        usleep(30_000)
        #expect(Self.waitUntilArmed(player, cue: 1), "c2 was never armed")
        _ = try player.go()
        usleep(150_000)
        gate.signal()
        gate.signal()
        let end = player.position + 24_000
        #expect(ThreadedTestDevice.wait(timeout: 10) { player.position >= end })
        player.stop()
        #expect(player.standbyStatistics.armed == 2, "\(player.standbyStatistics)")
        #expect(!engine.discontinuities.contains { $0.kind == .underrun }, "\(engine.discontinuities)")
    }
}
