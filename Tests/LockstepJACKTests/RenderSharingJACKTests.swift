import Foundation
import Lockstep
import LockstepJACK
import LockstepTestSupport
import Testing

extension JACKTests {
    /// An engine of hundreds of queues on a realtime server: its cycles are shared with a helper
    /// thread, and what reaches the JACK graph is the exact mix, on the frame it was scheduled for.
    @Suite("JACK render sharing", .serialized)
    struct RenderSharingJACKTests {
        static let layers = 400
        static let frames = 24_000

        /// Values any order of summation adds exactly.
        static func value(_ i: Int, _ t: Int) -> Float { Float((i * 31 + t) % 17 - 8) / 1024 }

        struct Outcome {
            var xruns = 0
            var helper = false
            var helperChunks = 0
            var sharedCycles = 0
            var wrongFrames = -1
            var firstFrameOnStart = false
        }

        static func play(expected: [Float], helper: Bool = true) throws -> Outcome {
            let server = try JACKServer(period: 1024)
            defer { server.stop() }
            let device = try JACKDevice(options: .init(clientName: "lockstep-sharing", serverName: server.name,
                                                       connectToPhysicalOutputs: false, usesRenderHelper: helper))
            let engine = try Engine(device: device, maximumQueues: 1024)
            try device.start()
            let capture = try JACKCapture(server: server, sources: device.outputPortNames, maxSeconds: 4)
            try capture.start()
            #expect(capture.waitForFrames(2048, timeout: 5))
            let mono = StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .float32)
            var queues: [OutputQueue] = []
            for i in 0..<layers {
                let queue = try engine.makeOutputQueue(format: mono) { _, _ in }
                try queue.enqueueSamples((0..<frames).map { value(i, $0) })
                queues.append(queue)
            }
            let period = Int64(device.periodFrames)
            let now = engine.nearestStartTime(atOrAfter: engine.currentTime().sampleTime)
            let start = (now / period + 3) * period + 333
            let group = try engine.start(queues, at: start)
            #expect(group.sampleTime == start && group.framesLate == 0)
            #expect(capture.wait(timeout: 10) {
                capture.currentFrameTime.map { Int64($0) > (start + Int64(frames) + 2048) & 0xFFFF_FFFF } ?? false
            })
            var outcome = Outcome()
            outcome.xruns = engine.discontinuities.filter { $0.kind == .xrun }.count + capture.xrunCount + capture.droppedFrames
            outcome.helper = device.hasRenderHelper
            (outcome.sharedCycles, outcome.helperChunks) = engine.renderSharing
            if let first = capture.firstNonSilentRecordedFrame(channel: 0) {
                outcome.firstFrameOnStart = Int64(capture.frameTime(ofRecordedFrame: first)) == start & 0xFFFF_FFFF
                let left = capture.channel(0), right = capture.channel(1)
                if first + frames < left.count {
                    outcome.wrongFrames = (0..<frames).filter { left[first + $0] != expected[$0] || right[first + $0] != expected[$0] }.count
                        + (left[first + frames] == 0 ? 0 : 1)
                }
            }
            capture.stop()
            return outcome
        }

        @Test("400 layers on a realtime server: a helper shares the cycles, and the capture is the exact mix from the scheduled frame; with the helper turned off, the same")
        func sharedLive() throws {
            var expected = [Float](repeating: 0, count: Self.frames)
            for t in 0..<Self.frames { for i in 0..<Self.layers { expected[t] += Self.value(i, t) } }
            let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
            let server = try JACKServer(period: 1024)
            let realtime = server.isRealtime
            server.stop()
            try retryingOnXruns("RenderSharingJACKTests") { xrun in
                let outcome = try Self.play(expected: expected)
                // A helper exactly when the server runs realtime on a machine of two cores or more.
                #expect(outcome.helper == (realtime && cores >= 2), "realtime \(realtime), \(cores) cores")
                #expect(outcome.sharedCycles > 0)
                if outcome.helper { #expect(outcome.helperChunks > 0) }
                // An xrun loses frames at JACK itself, before any client.
                xrun.set(outcome.xruns > 0)
                #expect(outcome.firstFrameOnStart)
                #expect(outcome.wrongFrames == 0)
            }
            // Without the helper (the option off): the render thread takes every chunk, and the
            // capture is the same exact mix.
            try retryingOnXruns("RenderSharingJACKTests") { xrun in
                let alone = try Self.play(expected: expected, helper: false)
                #expect(!alone.helper && alone.helperChunks == 0 && alone.sharedCycles > 0)
                xrun.set(alone.xruns > 0)
                #expect(alone.firstFrameOnStart)
                #expect(alone.wrongFrames == 0)
            }
        }
    }
}
