import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSession
import LockstepTestSupport
import Testing

extension JACKTests {
    /// GO on a live session: each lands on the sample the player reports, at most two periods after
    /// the command is read, however far ahead the layers have computed (4 × 1024 samples).
    @Suite("GO latency (live, period 256)", .serialized)
    struct GoLatencyTests {
        /// GOs fired (LOCKSTEP_GO_COUNT; Scripts/bench.sh part 9 fires 100).
        static let count = Int(ProcessInfo.processInfo.environment["LOCKSTEP_GO_COUNT"] ?? "") ?? 20

        @Test("every GO sounds on its reported sample, within two periods of the command, with no underrun")
        func goesLandWithinTwoPeriods() throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-go")
            func write(_ name: String, _ samples: [Float]) throws {
                let writer = try AudioFileWriter(path: temp.file(name), format: StreamFormat(sampleRate: 48000, channelCount: 1))
                try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count) }
                try writer.close()
            }
            try write("bed.wav", Signals.constant(0.125, frames: 48000 * 60))
            try write("hit.wav", Signals.impulse(at: 0, frames: 16, value: 0.5))
            var text = "channels: 1\nlayers: { bed: {}, fx: {} }\ncues:\n  - { name: bed, layer: bed, file: bed.wav, at: 0 }\n"
            for n in 1...Self.count { text += "  - { name: c\(n), layer: fx, file: hit.wav, at: manual }\n" }
            try text.write(toFile: temp.file("go.yaml"), atomically: true, encoding: .utf8)

            let server = try JACKServer(period: 256)
            let device = try JACKDevice(options: .init(clientName: "lockstep-go", serverName: server.name,
                                                       connectToPhysicalOutputs: false))
            let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
            try device.start()
            let capture = try JACKCapture(server: server, sources: [device.outputPortNames[0]],
                                          maxSeconds: Double(Self.count) * 0.1 + 8)
            try capture.start()
            #expect(capture.waitForFrames(2048, timeout: 5))
            let player = try SessionPlayer(session: try Session.load(path: temp.file("go.yaml")), engine: engine)
            try player.start()
            usleep(300_000)

            var leads: [Int64] = []
            var starts: [Int64] = []
            var generator = SystemRandomNumberGenerator()
            for _ in 1...Self.count {
                // Commands arrive at any phase of the period.
                usleep(UInt32.random(in: 20_000...60_000, using: &generator))
                let now = engine.currentTime().sampleTime
                let go = try player.go()
                let at = player.deviceTime(forPosition: go.start)
                leads.append(at - now)
                starts.append(at)
            }
            let last = try #require(starts.last)
            let target = device.jackFrameTime(forSampleTime: last + 2048)
            #expect(capture.wait(timeout: 10) {
                capture.currentFrameTime.map { Int32(bitPattern: $0 &- target) > 0 } ?? false
            })
            player.stop()
            capture.stop()

            let live = capture.channel(0)
            for at in starts {
                let index = try #require(capture.recordedIndex(atFrameTime: Int64(device.jackFrameTime(forSampleTime: at))))
                #expect(live[index - 1] == 0.125 && live[index] == 0.625 && live[index + 1] == 0.125,
                        "the GO reported for device sample \(at) does not sound there: \(live[(index - 2)...(index + 2)])")
            }
            let period = Int64(device.periodFrames)
            #expect(leads.allSatisfy { $0 > 0 && $0 <= 2 * period }, "\(leads)")
            #expect(!engine.discontinuities.contains { $0.kind == .underrun }, "\(engine.discontinuities)")
            let sorted = leads.sorted()
            func ms(_ frames: Int64) -> String { String(format: "%.2f", Double(frames) * 1000 / 48000) }
            let p50 = sorted[sorted.count / 2], p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
            print("GO latency: \(Self.count) GOs, period \(period): command read to first sample p50 \(p50) frames (\(ms(p50)) ms), p99 \(p99) (\(ms(p99)) ms), max \(sorted.last!) (\(ms(sorted.last!)) ms); every cue on its reported sample")
        }
    }
}
