import Lockstep
import LockstepTestSupport
import Testing

@Suite("Mixer: volume, ramps, meters, underruns, time")
struct MixerTests {
    let mono = StreamFormat(sampleRate: 48000, channelCount: 1)

    @Test("a per-buffer volume starts ramping on its buffer's first frame and reaches the value after 5 ms")
    func perBufferVolume() throws {
        let h = try OfflineHarness(channels: 1, period: 128)
        let q = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        try q.enqueueSamples(Signals.constant(1, frames: 1000))
        try q.enqueueSamples(Signals.constant(1, frames: 1000), parameters: [ParameterEvent(.volume, 0.5)])
        try q.start()
        let out = try h.render(frames: 2000)
        let ramp = h.engine.gainRampFrames
        #expect(ramp == 240)
        #expect(Array(out[0..<1000]).allSatisfy { $0 == 1 })
        #expect(out[1000] < 1 && out[1000] > 0.99)      // first frame of the buffer moves
        for i in 1000..<(1000 + ramp - 1) { #expect(out[i + 1] < out[i]) }   // monotonic ramp
        #expect(Array(out[(1000 + ramp)...]).allSatisfy { $0 == 0.5 })
        #expect(q.volume == 0.5)
        let error = #expect(throws: AudioQueueError.self) {
            try q.enqueueSamples(Signals.constant(1, frames: 10), parameters: [ParameterEvent(.volume, 1.5)])
        }
        #expect(error?.code == .invalidParameter)
    }

    @Test("setting Volume while playing ramps without a click; out-of-range values fail")
    func volumeRamp() throws {
        let h = try OfflineHarness(channels: 1, period: 100)
        let q = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        try q.enqueueSamples(Signals.constant(1, frames: 4800))
        try q.start()
        _ = try h.render(frames: 100)
        try q.setVolume(0)
        let out = try h.render(frames: 400)
        let maxStep = zip(out, out.dropFirst()).map { abs($0 - $1) }.max() ?? 0
        #expect(maxStep <= 1.0 / 240 + 1e-6)
        #expect(out.last == 0)
        #expect(throws: AudioQueueError.self) { try q.setVolume(-0.1) }
        #expect(throws: AudioQueueError.self) { try q.setVolume(.nan) }
        #expect(throws: AudioQueueError.self) { try q.setMixerGain(decibels: 12.5) }
        try q.setMixerGain(decibels: -.infinity)
        try q.setMixerGain(decibels: 12)
    }

    @Test("meters of a full-scale sine: peak 1.0, RMS 0.707, -3.01 dB")
    func sineMeter() throws {
        let h = try OfflineHarness(channels: 2, period: 2400)
        let q = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        #expect(throws: AudioQueueError.self) { try q.currentLevelMeter() }
        q.isLevelMeteringEnabled = true
        h.engine.isMasterMeteringEnabled = true
        // 1 kHz at 48 kHz: 48 frames a cycle; amplitude 1, phase so that peaks hit ±1 exactly.
        try q.enqueueSamples(Signals.sine(frequency: 1000, sampleRate: 48000, frames: 48000, phase: .pi / 2))
        try q.start()
        _ = try h.render(frames: 4800)
        let level = try #require(try q.currentLevelMeter().first)
        #expect(abs(level.peakPower - 1.0) < 1e-6)
        #expect(abs(level.averagePower - 0.70710678) < 1e-4)
        let db = try #require(try q.currentLevelMeterDB().first)
        #expect(abs(db.peakPower) < 1e-4)
        #expect(abs(db.averagePower - -3.0103) < 1e-3)
        let master = h.engine.masterLevels
        #expect(master.count == 2)
        #expect(abs(master[0].peakPower - 1.0) < 1e-6)

        // A scheduled gap of silence brings the queue's levels down to zero.
        let gapped = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        gapped.isLevelMeteringEnabled = true
        try gapped.enqueueSamples(Signals.constant(1, frames: 2400))
        try gapped.enqueueSamples(Signals.constant(1, frames: 2400), startTime: 48000)
        try gapped.start()
        _ = try h.render(frames: 2400)
        #expect(try gapped.currentLevelMeter().first?.peakPower == 1)
        _ = try h.render(frames: 4800)
        #expect(try gapped.currentLevelMeter().first == ChannelLevel(averagePower: 0, peakPower: 0))
        #expect(try gapped.currentLevelMeterDB().first?.peakPower == -.infinity)
    }

    @Test("an underrun plays silence of exactly the missing length, is reported once, and keeps alignment")
    func underrun() throws {
        let h = try OfflineHarness(channels: 2, period: 100)
        let steady = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2), name: "steady") { _, _ in }
        let late = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 2), name: "late") { _, _ in }
        let timeline = try late.makeTimeline()
        let ramp = Signals.ramp(frames: 2000, start: 1)
        // `steady` carries the ramp on its left channel, `late` on its right channel, but only its
        // first 250 frames for now.
        func stereoRight(_ range: Range<Int>) -> [Float] { range.flatMap { [0, ramp[$0]] } }
        try steady.enqueueSamples((0..<2000).flatMap { [ramp[$0], 0] })
        try late.enqueueSamples(stereoRight(0..<250))
        try h.engine.start([steady, late], at: 0)
        _ = try h.render(frames: 400)           // late ran dry at frame 250
        #expect(try late.currentTime(timeline: timeline).discontinuity)
        #expect(try late.currentTime(timeline: timeline).discontinuity == false)
        try late.enqueueSamples(stereoRight(250..<2000))   // arrives at frame 400: 150 frames late
        let rest = try h.render(frames: 1600)
        // Right channel (late layer) from 400 on equals the ramp at the same frame: aligned.
        for i in 0..<1600 {
            #expect(rest[i * 2 + 1] == ramp[400 + i], "frame \(400 + i)")
            #expect(rest[i * 2] == ramp[400 + i], "frame \(400 + i)")
        }
        let reports = h.engine.discontinuities
        #expect(reports.count == 1)
        #expect(reports.first?.kind == .underrun)
        #expect(reports.first?.sampleTime == 250)
        #expect(reports.first?.length == 150)
        #expect(reports.first?.queues == ["late"])
    }

    @Test("a queue started with nothing enqueued, then fed late, reports the gap and stays on time")
    func underrunAtStart() throws {
        let h = try OfflineHarness(channels: 1, period: 64)
        let q = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        try q.start(at: 0)
        _ = try h.render(frames: 64)
        try q.enqueueSamples(Signals.ramp(frames: 200, start: 1))
        let out = try h.render(frames: 200)
        #expect(out[0] == Float(65) / 65536)   // frame 64 of the ramp (value 65): the first 64 were skipped
        #expect(h.engine.discontinuities.map(\.length) == [64])
    }

    @Test("the late-buffer policy is explicit: skipping to stay aligned by default, or playing in full as the timeline slides")
    func lateBufferPolicy() throws {
        let h = try OfflineHarness(channels: 2, period: 100)
        let stereo = StreamFormat(sampleRate: 48000, channelCount: 2)
        let aligned = try h.engine.makeOutputQueue(format: stereo, name: "aligned") { _, _ in }
        let full = try h.engine.makeOutputQueue(format: stereo, name: "full") { _, _ in }
        #expect(aligned.lateBufferPolicy == .skipToStayAligned)
        full.lateBufferPolicy = .playInFull
        #expect(full.lateBufferPolicy == .playInFull)
        let timeline = try full.makeTimeline()
        let ramp = Signals.ramp(frames: 1000, start: 1)
        // `aligned` on the left channel, `full` on the right: both run dry at frame 250 and get
        // the rest of the ramp 150 frames late, at frame 400.
        try aligned.enqueueSamples((0..<250).flatMap { [ramp[$0], 0] })
        try full.enqueueSamples((0..<250).flatMap { [0, ramp[$0]] })
        try h.engine.start([aligned, full], at: 0)
        _ = try h.render(frames: 400)
        try aligned.enqueueSamples((250..<1000).flatMap { [ramp[$0], 0] })
        try full.enqueueSamples((250..<1000).flatMap { [0, ramp[$0]] })
        let rest = try h.render(frames: 1000)
        for i in 0..<1000 {
            // Skip: frame 400 + i plays ramp frame 400 + i (frames 250…399 are lost).
            #expect(rest[i * 2] == (400 + i < 1000 ? ramp[400 + i] : 0), "aligned, frame \(400 + i)")
            // In full: frame 400 + i plays ramp frame 250 + i, every frame heard.
            #expect(rest[i * 2 + 1] == (250 + i < 1000 ? ramp[250 + i] : 0), "full, frame \(400 + i)")
        }
        // Both report the 150 missing frames where they were due, and the timeline flag is set.
        let underruns = h.engine.discontinuities.filter { $0.kind == .underrun }
        #expect(underruns.map(\.queues) == [["aligned"], ["full"]] || underruns.map(\.queues) == [["full"], ["aligned"]])
        #expect(underruns.allSatisfy { $0.sampleTime == 250 && $0.length == 150 })
        #expect(try full.currentTime(timeline: timeline).discontinuity)
        // Queue time ran on through the gap (1400 device frames rendered, 1400 queue frames).
        #expect(try full.currentTime().sampleTime == 1400)
    }

    @Test("queue time, device time and host time translate consistently")
    func timeTranslation() throws {
        let h = try OfflineHarness(channels: 1, period: 480)
        let q = try h.engine.makeOutputQueue(format: mono) { _, _ in }
        try q.enqueueSamples(Signals.constant(0.1, frames: 48000))
        #expect(h.engine.nearestStartTime(atOrAfter: 0) == 0)
        try q.start(at: 960)
        #expect(throws: AudioQueueError.self) { try q.deviceSampleTime(forQueueTime: 0) }
        _ = try h.render(frames: 4800)
        let now = try q.currentTime()
        #expect(now.deviceSampleTime == 4800)
        #expect(now.sampleTime == 4800 - 960)
        #expect(try q.deviceSampleTime(forQueueTime: 0) == 960)
        #expect(try q.queueTime(forDeviceSampleTime: 4800) == 3840)
        #expect(h.engine.hostTime(forSampleTime: 48000) == 1_000_000)
        #expect(h.engine.sampleTime(forHostTime: 500_000) == 24000)
        #expect(h.engine.currentTime().sampleTime == 4800)
        #expect(h.engine.nearestStartTime(atOrAfter: 100) == 4800)
    }

    @Test("invalid formats and devices are refused with unsupported-format errors")
    func formatErrors() throws {
        let h = try OfflineHarness(channels: 1)
        var error = #expect(throws: AudioQueueError.self) {
            try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 0)) { _, _ in }
        }
        #expect(error?.code == .unsupportedFormat)
        error = #expect(throws: AudioQueueError.self) {
            try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 44100, channelCount: 1)) { _, _ in }
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("rate converter") == true)
        error = #expect(throws: AudioQueueError.self) {
            try OfflineDevice(format: StreamFormat(sampleRate: -1, channelCount: 2))
        }
        #expect(error?.code == .unsupportedFormat)
        // Validated before anything is allocated (a 0-frame maximum once wrote past its buffer).
        for frames in [0, -1, (1 << 20) + 1] {
            error = #expect(throws: AudioQueueError.self) {
                try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2), maximumFramesPerRender: frames,
                                  inputChannelCount: 2)
            }
            #expect(error?.code == .invalidParameter && error?.message.contains("maximumFramesPerRender") == true)
        }
    }

    @Test("offline render writes the device's sample format")
    func offlineFormats() throws {
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16))
        let engine = try Engine(device: device)
        let q = try engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, _ in }
        try q.enqueueSamples([0.5, -0.5, 1.5, -1.5])
        try q.start()
        var bytes = [UInt8](repeating: 0, count: 8)
        let stamp = try bytes.withUnsafeMutableBytes { try device.render(frames: 4, into: $0) }
        #expect(stamp.sampleTime == 0)
        let values = bytes.withUnsafeBytes { raw in (0..<4).map { raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self) } }
        #expect(values == [16384, -16384, 32767, -32768])
        let error = #expect(throws: AudioQueueError.self) {
            try bytes.withUnsafeMutableBytes { try device.render(frames: 5, into: $0) }
        }
        #expect(error?.code == .invalidParameter)
    }
}

extension MixerTests {
    @Test("frames the device's clock skips (an xrun) are skipped by aligned queues, which stay on the timeline; a play-in-full queue slides")
    func deviceSkipKeepsQueuesAligned() throws {
        let device = SteppingDevice()
        let engine = try Engine(device: device)
        let stereo = StreamFormat(sampleRate: 48000, channelCount: 2)
        let aligned = try engine.makeOutputQueue(format: stereo, name: "aligned") { _, _ in }
        let full = try engine.makeOutputQueue(format: stereo, name: "full") { _, _ in }
        full.lateBufferPolicy = .playInFull
        let ramp = Signals.ramp(frames: 4096, start: 1)
        try aligned.enqueueSamples(ramp.flatMap { [$0, 0] })
        try full.enqueueSamples(ramp.flatMap { [0, $0] })
        try engine.start([aligned, full], at: 0)
        var left: [Int64: Float] = [:], right: [Int64: Float] = [:]
        func cycle(_ t: Int64) {
            let out = device.cycle(at: t)
            for i in 0..<256 { left[t + Int64(i)] = out[0][i]; right[t + Int64(i)] = out[1][i] }
        }
        for t in stride(from: Int64(0), to: 1024, by: 256) { cycle(t) }
        // The clock skips 512 frames: device samples 1024..<1536 are never rendered.
        for t in stride(from: Int64(1536), to: 3072, by: 256) { cycle(t) }
        for t in stride(from: Int64(0), to: 3072, by: 1) where !(1024..<1536).contains(t) {
            // Aligned: device sample t plays ramp frame t, before the skip and after it.
            #expect(left[t] == ramp[Int(t)], "aligned, device sample \(t)")
            // In full: after the skip, device sample t plays ramp frame t - 512 (nothing lost).
            #expect(right[t] == ramp[Int(t < 1024 ? t : t - 512)], "full, device sample \(t)")
            if left[t] != ramp[Int(t)] || right[t] != ramp[Int(t < 1024 ? t : t - 512)] { break }
        }
        #expect(aligned.skippedFrames == 512)
        #expect(full.skippedFrames == 0)
        #expect(try aligned.currentTime().sampleTime == 3072)
        #expect(try full.currentTime().sampleTime == 2560)
    }
}
