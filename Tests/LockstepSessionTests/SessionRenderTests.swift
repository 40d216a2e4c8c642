import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
import LockstepTestSupport
import Testing

/// Renders `frames` frames in calls of at most 256.
func render(_ device: OfflineDevice, frames: Int) throws -> [Float] {
    var output: [Float] = []
    var left = frames
    while left > 0 {
        let n = min(256, left)
        output += try device.renderFloat(frames: n)
        left -= n
    }
    return output
}

@Suite("Session render: sample-exact placement, gains, fades, crossfades, loops, conversion")
struct SessionRenderTests {
    @Test("an impulse lands on its sample with the layer's and the cue's gain, on every channel")
    func impulsePlacement() throws {
        let fixture = try SessionFixture()
        try fixture.audio("click.wav", Signals.impulse(at: 10, frames: 100, value: 0.5))
        let out = try fixture.render("""
            layers: { fx: { gain: -3dB } }
            cues:
              - { name: a, layer: fx, file: click.wav, at: "480 samples", gain: -3dB }
              - { name: b, layer: fx, file: click.wav, after: a, offset: "7 samples" }
            """)
        #expect(out.channels == 2)
        let left = channel(0, out.samples, 2), right = channel(1, out.samples, 2)
        #expect(left.count == 480 + 100 + 7 + 100)
        let nonzero = left.indices.filter { left[$0] != 0 }
        #expect(nonzero == [490, 480 + 100 + 7 + 10])
        #expect(abs(left[490] - 0.5 * linear(-6)) < 1e-6)
        #expect(abs(left[597] - 0.5 * linear(-3)) < 1e-6)
        #expect(left == right)
    }

    @Test("loops are gapless and from/to cut the region exactly (in the file's samples)")
    func loopsAndRegions() throws {
        let fixture = try SessionFixture()
        try fixture.audio("ramp.wav", ramp(100))
        let out = try fixture.render("""
            channels: 1
            cues:
              - { name: loop, file: ramp.wav, at: "50 samples", loop: 3 }
              - { name: cut, file: ramp.wav, after: loop, from: "10 samples", to: "60 samples", loop: 2 }
            """)
        let r = ramp(100)
        #expect(Array(out.samples[0..<50]) == Array(repeating: 0, count: 50))
        #expect(Array(out.samples[50..<350]) == r + r + r)
        #expect(Array(out.samples[350..<450]) == Array(r[10..<60]) + Array(r[10..<60]))
        #expect(out.samples.count == 450)
    }

    @Test("a crossfade is equal-power: the outgoing cue follows cos, the incoming sin, over exactly the overlap")
    func crossfade() throws {
        let fixture = try SessionFixture()
        try fixture.audio("left.wav", Signals.constant(1, frames: 4800, channels: 2).enumerated().map { $0.offset % 2 == 0 ? $0.element : 0 }, channels: 2)
        try fixture.audio("right.wav", Signals.constant(1, frames: 4800, channels: 2).enumerated().map { $0.offset % 2 == 1 ? $0.element : 0 }, channels: 2)
        let out = try fixture.render("""
            cues:
              - { name: a, file: left.wav, at: 0 }
              - { name: b, file: right.wav, after: a, crossfade: "1000 samples" }
            """)
        let left = channel(0, out.samples, 2), right = channel(1, out.samples, 2)
        #expect(left.count == 4800 + 4800 - 1000)
        #expect(left[3799] == 1 && right[3799] == 0)
        for j in 0..<1000 {
            let angle: Double = .pi / 2 * Double(j) / 1000
            let expectedOut = Float(cos(angle)), expectedIn = Float(sin(angle))
            let l: Float = left[3800 + j], r: Float = right[3800 + j]
            #expect(abs(l - expectedOut) < 1e-6 && abs(r - expectedIn) < 1e-6, "overlap sample \(j)")
            let power: Float = l * l + r * r
            #expect(abs(power - 1) < 1e-5)
        }
        #expect(left[4800] == 0 && right[4800] == 1)
    }

    @Test("fade in and fade out follow a quarter sine over their length")
    func fades() throws {
        let fixture = try SessionFixture()
        try fixture.audio("one.wav", Signals.constant(0.5, frames: 2000))
        let out = try fixture.render("""
            channels: 1
            cues: [ { file: one.wav, fade_in: "100 samples", fade_out: "200 samples" } ]
            """)
        for k in [0, 1, 50, 99] { #expect(abs(out.samples[k] - 0.5 * Float(sin(.pi / 2 * Double(k) / 100))) < 1e-6) }
        #expect(out.samples[100] == 0.5 && out.samples[1799] == 0.5)
        for k in [1800, 1900, 1999] { #expect(abs(out.samples[k] - 0.5 * Float(sin(.pi / 2 * Double(2000 - k) / 200))) < 1e-6) }
    }

    @Test("automation changes the layer's gain on its sample, ramped in dB")
    func automation() throws {
        let fixture = try SessionFixture()
        try fixture.audio("one.wav", Signals.constant(0.5, frames: 3000))
        let out = try fixture.render("""
            channels: 1
            cues: [ { file: one.wav } ]
            automation:
              - { layer: main, at: "1000 samples", gain: -12dB, ramp: "1000 samples" }
            """)
        #expect(out.samples[999] == 0.5)
        #expect(abs(out.samples[1500] - 0.5 * linear(-6)) < 1e-6)
        #expect(abs(out.samples[2500] - 0.5 * linear(-12)) < 1e-6)
    }

    @Test("a file at another rate is converted and still starts on its sample")
    func rateConversion() throws {
        let fixture = try SessionFixture()
        try fixture.audio("slow.wav", Signals.impulse(at: 1000, frames: 24000, value: 0.5), rate: 24000)
        let out = try fixture.render("""
            channels: 1
            cues: [ { file: slow.wav, at: "333 samples" } ]
            """)
        #expect(out.samples.count == 333 + 48000)
        #expect(Signals.peakIndex(out.samples) == 333 + 2000)
    }

    @Test("manual cues play only where --go places them; a forever loop needs a duration")
    func manualAndForever() throws {
        let fixture = try SessionFixture()
        try fixture.audio("click.wav", Signals.impulse(at: 0, frames: 10, value: 0.25))
        let text = """
            channels: 1
            cues:
              - { name: bed, file: click.wav, at: 0, loop: 100 }
              - { name: bell, file: click.wav, at: manual }
            """
        let without = try fixture.render(text)
        #expect(without.samples.count == 1000)
        let with = try fixture.render(text, go: [("bell", .samples(1234))])
        #expect(with.samples.count == 1244)
        #expect(with.samples[1234] == 0.25)
        #expect(with.summary.timeline.cues[1].start == 1234)
        let forever = "channels: 1\ncues: [ { name: bed, file: click.wav, loop: forever } ]\n"
        #expect(throws: PlayerError.self) { try fixture.render(forever) }
        let limited = try fixture.render(forever, duration: .samples(95))
        #expect(limited.samples.count == 95 && limited.samples.filter { $0 != 0 }.count == 10)
    }

    @Test("starting mid-session (--from) plays every cue from the right place, as the full render does")
    func startFrom() throws {
        let fixture = try SessionFixture()
        try fixture.audio("a.wav", ramp(3000))
        try fixture.audio("b.wav", ramp(2000).map { -$0 })
        let text = """
            cues:
              - { name: a, file: a.wav, at: 0, loop: 2, fade_in: "100 samples" }
              - { name: b, file: b.wav, at: "1500 samples", fade_out: "300 samples" }
            automation:
              - { layer: main, at: "2000 samples", gain: -6dB, ramp: "500 samples" }
            """
        let full = try fixture.render(text).samples
        let session = try Session.load(path: try fixture.session(text, name: "from.yaml"))
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2), maximumFramesPerRender: 256)
        let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
        let player = try SessionPlayer(session: session, engine: engine)
        try player.start(from: 3100, at: 0)
        let rendered = try render(device, frames: 2900)
        #expect(rendered == Array(full[(3100 * 2)..<(6000 * 2)]))
    }

    @Test("go lands on the first sample no layer has computed, and the cue plays there")
    func goWhilePlaying() throws {
        let fixture = try SessionFixture()
        try fixture.audio("bed.wav", Signals.constant(0.125, frames: 48000))
        try fixture.audio("click.wav", Signals.impulse(at: 0, frames: 10, value: 0.5))
        let session = try Session.load(path: try fixture.session("""
            channels: 1
            layers: { bed: {}, fx: {} }
            cues:
              - { name: bed, layer: bed, file: bed.wav, at: 0 }
              - { name: bell, layer: fx, file: click.wav, at: manual }
            """))
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 1), maximumFramesPerRender: 256)
        let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
        let player = try SessionPlayer(session: session, engine: engine)
        try player.start(from: 0, at: 0)
        var output = try render(device, frames: 4096)
        let result = try player.go()
        #expect(result.cue == "bell" && result.placed == ["bell"])
        #expect(result.start >= 4096 && result.start <= 4096 + Int64(player.bufferFrames * player.bufferCount))
        output += try render(device, frames: 8192)
        let clicks = output.indices.filter { output[$0] > 0.5 }
        #expect(clicks == [Int(result.start)])
        // Fired again once played: placed anew where the control lands, the first click kept.
        let again = try player.go("bell")
        #expect(again.start >= 4096 + 8192)
        output += try render(device, frames: 8192)
        #expect(output.indices.filter { output[$0] > 0.5 } == [Int(result.start), Int(again.start)])
        #expect(throws: PlayerError.self) { try player.go("bed") }
        #expect(throws: PlayerError.self) { try player.setGain(layer: "bedd", decibels: -6) }
    }
}

@Suite("Session seek into converted cues")
struct SessionConvertedSeekTests {
    @Test("starting inside a rate-converted, looping cue matches the full render to within rounding")
    func startInsideConvertedCue() throws {
        let fixture = try SessionFixture()
        try fixture.audio("slow.wav", Signals.sine(frequency: 220, sampleRate: 44100, frames: 44100, amplitude: 0.3), rate: 44100)
        let text = """
            channels: 1
            cues:
              - { name: bed, file: slow.wav, at: 0.25, to: 0.5, loop: 3 }
            """
        let full = try fixture.render(text).samples
        #expect(full.count == 84000)
        #expect((full.lastIndex { $0 != 0 } ?? 0) > 83990)             // the converted loop plays to its end
        let session = try Session.load(path: try fixture.session(text, name: "conv.yaml"))
        for from in [12000 + 100, 20000, 12000 + 24000 + 17] {
            let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 1), maximumFramesPerRender: 256)
            let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
            let player = try SessionPlayer(session: session, engine: engine)
            try player.start(from: Int64(from), at: 0)
            let count = full.count - from
            let rendered = try render(device, frames: count)
            var largest: Float = 0
            var at = 0
            for i in 0..<count where abs(rendered[i] - full[from + i]) > largest {
                largest = abs(rendered[i] - full[from + i])
                at = i
            }
            let firstBad = (0..<count).first { abs(rendered[$0] - full[from + $0]) > 1e-5 }
            let nonzeroFull = full.lastIndex { $0 != 0 } ?? -1
            let nonzeroMine = rendered.lastIndex { $0 != 0 }.map { $0 + from } ?? -1
            #expect(largest < 1e-5, "from \(from): largest difference \(largest) at \(at); first bad \(String(describing: firstBad)); last sound full \(nonzeroFull) mine \(nonzeroMine)")
        }
    }
}

@Suite("Late session starts")
struct LateSessionStartTests {
    @Test("a start too late for its sample skips the missed frames, stays on the timeline and is reported")
    func lateStartIsReported() throws {
        let fixture = try SessionFixture()
        try fixture.audio("ramp.wav", Signals.ramp(frames: 48000, start: 1, step: 1.0 / 65536))
        let session = try Session.load(path: try fixture.session("""
            layers:
              music: {}
            cues:
              - { name: a, layer: music, file: ramp.wav, at: 0 }
            """))
        let device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 1), maximumFramesPerRender: 256)
        let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
        let player = try SessionPlayer(session: session, engine: engine)
        _ = try render(device, frames: 1024)
        #expect(player.lateStarts.isEmpty)
        // Asked to play session sample 0 at device sample 500, which has passed (now: 1024).
        let origin = try player.start(from: 0, at: 500)
        #expect(origin == 500)
        #expect(player.lateStarts == [SessionPlayer.LateStart(position: 0, sampleTime: 1024, skippedFrames: 524)])
        let out = try render(device, frames: 256)
        // Device sample 1024 plays session sample 524: ramp value (524 + 1) steps.
        #expect(out[0] == Float(525) / 65536)
    }
}
