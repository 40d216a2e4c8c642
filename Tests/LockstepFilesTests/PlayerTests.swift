import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Synchronization
import Testing

@Suite("File player and mixdown")
struct PlayerTests {
    let temp: TemporaryTestDirectory
    var dir: String { temp.path }

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-player")
    }

    func write(_ name: String, _ samples: [Float], rate: Double, channels: Int = 1, type: AudioFileType = .wav,
               sampleFormat: SampleFormat = .float32) throws -> String {
        let path = "\(dir)/\(name)"
        try Helpers.write(samples, to: path, type: type,
                          format: StreamFormat(sampleRate: rate, channelCount: channels, sampleFormat: sampleFormat))
        return path
    }

    @Test("a rate-converted impulse lands on the right device sample, with a start inside a period")
    func rateConvertedImpulse() throws {
        // 0.1 s into each file: frame 4410 at 44.1 kHz, 9600 at 96 kHz, 4800 at 48 kHz.
        let slow = try write("slow.wav", Signals.impulse(at: 4410, frames: 44100), rate: 44100)
        let fast = try write("fast.wav", Signals.impulse(at: 9600, frames: 96000), rate: 96000)
        let same = try write("same.wav", Signals.impulse(at: 4800, frames: 48000), rate: 48000)
        for path in [slow, fast, same] {
            let h = try OfflineHarness(channels: 1, period: 256)
            let player = try FilePlayer(path: path, engine: h.engine)
            try player.prepare()
            try player.queue.start(at: 1000)
            let out = try h.render(frames: 48000 + 2000)
            #expect(Signals.peakIndex(out) == 1000 + 4800, "\(path)")
            #expect(out[5800] > 0.45, "\(path)")   // a 96 kHz impulse band-limited to 24 kHz peaks near 0.5
        }
    }

    @Test("a 44.1 kHz file repositioned plays on exactly as the uninterrupted play does from there (no warm-up transient)")
    func convertedReposition() throws {
        let path = try write("sine44.wav", Signals.sine(frequency: 997, sampleRate: 44100, frames: 44100), rate: 44100)
        let whole = try OfflineHarness(channels: 1, period: 256)
        let player = try FilePlayer(path: path, engine: whole.engine)
        #expect(player.queue.format.sampleRate == 48000)
        try player.prepare()
        try player.queue.start(at: 0)
        let reference = try whole.render(frames: 48000)

        let h = try OfflineHarness(channels: 1, period: 256)
        let moved = try FilePlayer(path: path, engine: h.engine)
        try moved.reposition(toOutputFrame: 20_000)       // before prepare: the buffers fill from there
        try moved.prepare()
        try moved.queue.start(at: 0)
        let out = try h.render(frames: 20_000)
        let worst = zip(out, reference[20_000...]).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-4, "differs by \(worst)")
    }

    @Test("looping is gapless and sample-exact; regions play start..<end")
    func looping() throws {
        let ramp = Signals.ramp(frames: 1000, start: 1)
        let path = try write("ramp.wav", ramp, rate: 48000)
        let h = try OfflineHarness(channels: 1, period: 300)
        let player = try FilePlayer(path: path, engine: h.engine, startFrame: 100, endFrame: 700, playCount: .times(3),
                                    bufferDuration: 0.005, bufferCount: 3)
        try player.prepare()
        try player.queue.start(at: 0)
        let out = try h.render(frames: 2100)
        let expected = Array(ramp[100..<700]) + Array(ramp[100..<700]) + Array(ramp[100..<700])
        #expect(Array(out[0..<1800]) == expected)
        #expect(Array(out[1800...]).allSatisfy { $0 == 0 })
        #expect(!player.queue.isRunning)
        #expect(h.engine.discontinuities.isEmpty)
        #expect(throws: FileError.self) { try FilePlayer(path: path, engine: h.engine, startFrame: 900, endFrame: 800) }
        #expect(throws: FileError.self) { try FilePlayer(path: path, engine: h.engine, playCount: .times(0)) }
    }

    @Test("players refilled by a streamer thread play every frame in order, live, and can be repositioned")
    func streamed() throws {
        let ramp = Signals.ramp(frames: 24000, start: 1, step: 1.0 / 65536)
        let path = try write("ramp.wav", ramp, rate: 48000)
        let device = ThreadedTestDevice(channels: 1, period: 256, speed: 4)
        let engine = try Engine(device: device)
        let streamer = FileStreamer()
        defer { streamer.stop() }
        // Two players of the same file, each on one half of the gain: their sum is the ramp.
        var players: [FilePlayer] = []
        for index in 0..<2 {
            let player = try FilePlayer(path: path, engine: engine, bufferDuration: 0.02, bufferCount: 4, streamer: streamer)
            try player.queue.setMixerGain(decibels: -6.020599913279624)
            try player.prepare(stagger: FilePlayer.stagger(forLayer: index))
            players.append(player)
        }
        #expect(players.allSatisfy { $0.streamer === streamer })
        try engine.start(players.map(\.queue), at: 1024)
        #expect(ThreadedTestDevice.wait { players.allSatisfy { !$0.queue.isRunning && $0.hasEnqueuedEverything } })
        let out = device.output
        let first = try #require(out.firstIndex { $0 != 0 })
        #expect(first == 1024)
        let played = Array(out[first..<min(out.count, first + 24000)])
        let mismatch = played.indices.first { played[$0] != ramp[$0] }
        #expect(played.count == 24000 && mismatch == nil, "first difference at frame \(mismatch ?? -1)")
        #expect(engine.discontinuities.filter { $0.kind == .underrun }.isEmpty)
        // Repositioning waits for refills still queued on the streamer, then plays from the frame.
        try players[0].reposition(toFrame: 12000)
        #expect(!players[0].queue.isRunning && !players[0].hasEnqueuedEverything)
    }

    @Test("staggered players play the same audio and hand their buffers back on different cycles")
    func staggered() throws {
        let ramp = Signals.ramp(frames: 4800, start: 1)
        let path = try write("ramp.wav", ramp, rate: 48000)
        let h = try OfflineHarness(channels: 1, period: 64)
        let staggers = (0..<4).map { FilePlayer.stagger(forLayer: $0) }
        #expect(staggers[0] == 0 && Set(staggers).count == 4 && staggers.allSatisfy { (0..<1).contains($0) })
        let completions = Mutex<[Int: [Int64]]>([:])
        var players: [FilePlayer] = []
        for (index, stagger) in staggers.enumerated() {
            let player = try FilePlayer(path: path, engine: h.engine, bufferDuration: 0.01, bufferCount: 3)
            try player.queue.setMixerGain(decibels: -12.041199826559248)        // a quarter each: the sum is the ramp
            player.queue.addEventHandler { queue, event in
                if case .bufferCompleted = event {
                    let now = (try? queue.currentTime().sampleTime) ?? -1
                    completions.withLock { $0[index, default: []].append(now) }
                }
            }
            try player.prepare(stagger: stagger)
            players.append(player)
        }
        try h.engine.start(players.map(\.queue), at: 0)
        let out = try h.render(frames: 4800 + 640)
        let mismatch = (0..<4800).first { abs(out[$0] - ramp[$0]) > 1e-6 * abs(ramp[$0]) }
        #expect(mismatch == nil, "the sum differs from the ramp at frame \(mismatch ?? -1)")
        #expect(out[4800...].allSatisfy { $0 == 0 })
        // The first hand-back of each player falls on a different cycle of 64 frames.
        let firsts = completions.withLock { list in (0..<4).map { list[$0]?.first ?? -1 } }
        #expect(Set(firsts.map { $0 / 64 }).count == 4, "\(firsts)")
        #expect(throws: FileError.self) {
            try FilePlayer(path: path, engine: h.engine).prepare(stagger: 1)
        }
    }

    @Test("memory stays bounded: at most bufferCount buffers are ever enqueued")
    func boundedBuffering() throws {
        let path = try write("long.wav", Signals.constant(0.25, frames: 48000 * 20), rate: 48000, sampleFormat: .int16)
        let h = try OfflineHarness(channels: 1, period: 4096)
        let player = try FilePlayer(path: path, engine: h.engine, bufferDuration: 0.1, bufferCount: 3)
        try player.prepare()
        try player.queue.start()
        var maxPending = 0
        for _ in 0..<(48000 * 20 / 4096 + 2) {
            let out = try h.device.renderFloat(frames: 4096)
            #expect(out.allSatisfy { $0 == 0.25 || $0 == 0 })
            maxPending = max(maxPending, try player.queue.prime())
        }
        #expect(maxPending <= 3 * 4800)
        #expect(h.engine.discontinuities.isEmpty)
        #expect(!player.queue.isRunning)
    }

    @Test("mixdown: layers with offsets and gains sum exactly; length is the longest layer")
    func mixdown() throws {
        let a = Signals.sine(frequency: 100, sampleRate: 48000, frames: 4800, amplitude: 0.5, channels: 2)
        let b = Signals.constant(0.25, frames: 2400)
        let pa = try write("a.wav", a, rate: 48000, channels: 2)
        let pb = try write("b.flac", b, rate: 48000, type: .flac, sampleFormat: .int16)
        let out = "\(dir)/mix.wav"
        let mixdown = try LayerMixdown(layers: [MixdownLayer(path: pa, gainDB: -6), MixdownLayer(path: pb, offset: 0.1)],
                                       outputPath: out, sampleRate: 48000, channelCount: 2, period: 1000)
        let summary = try mixdown.run()
        #expect(summary.frames == 7200)   // b starts at 0.1 s = 4800 and lasts 2400 frames
        #expect(abs(summary.peak - (0.5 * Float(Decibels.toLinear(-6)))) < 1e-3)
        let reader = try AudioFileReader(path: out)
        let mixed = try Helpers.readAll(reader)
        let g = Float(Decibels.toLinear(-6))
        let frames = max(4800, 4800 + 2400)
        #expect(mixed.count == frames * 2)
        for i in 0..<frames {
            for c in 0..<2 {
                let expectedA = i < 4800 ? a[i * 2 + c] * g : 0
                let expectedB: Float = (4800..<7200).contains(i) ? 0.25 : 0
                #expect(abs(mixed[i * 2 + c] - (expectedA + expectedB)) < 1e-6, "frame \(i)")
            }
        }
    }

    @Test("a failed mixdown leaves no output file behind")
    func failedMixdown() throws {
        let good = try write("good.wav", Signals.constant(0.1, frames: 4800), rate: 48000)
        let out = "\(dir)/never.wav"
        let mixdown = try LayerMixdown(layers: [MixdownLayer(path: good), MixdownLayer(path: "\(dir)/missing.wav")],
                                       outputPath: out)
        let error = #expect(throws: FileError.self) { try mixdown.run() }
        #expect(error?.description.contains("missing.wav") == true)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(!left.contains("never.wav"))
        #expect(!left.contains { $0.contains("tmp") })
    }
}
