import CJack
import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepTestSupport
import Testing

extension JACKTests {
    /// The live device against a real dummy-driver jackd, recorded by a capture client.
    @Suite("JACK device", .serialized)
    struct DeviceTests {
        /// A device and engine on `server`, not connected anywhere, plus a capture of its outputs.
        struct Rig {
            let server: JACKServer
            let device: JACKDevice
            let engine: Engine
            let capture: JACKCapture

            init(server: JACKServer, maxSeconds: Double = 6) throws {
                self.server = server
                device = try JACKDevice(options: .init(clientName: "lockstep-under-test", serverName: server.name,
                                                       connectToPhysicalOutputs: false))
                engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
                try device.start()
                capture = try JACKCapture(server: server, sources: device.outputPortNames, maxSeconds: maxSeconds)
                try capture.start()
                #expect(capture.waitForFrames(2048, timeout: 5))
            }
        }

        let mono48k = StreamFormat(sampleRate: 48000, channelCount: 1, sampleFormat: .int16)
        let stereo = StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32)

        @Test("layers started together land on one JACK frame, also mid-period, whatever their formats and rates")
        func layersOnOneFrame() throws {
            let server = try JACKServer()
            let rig = try Rig(server: server)
            let a = try rig.engine.makeOutputQueue(format: mono48k, name: "a") { _, _ in }
            let b = try rig.engine.makeOutputQueue(format: stereo, name: "b") { _, _ in }
            let c = try rig.engine.makeOutputQueue(format: StreamFormat(sampleRate: 44100, channelCount: 1), name: "c") { _, _ in }
            try a.enqueueSamples(Signals.impulse(at: 0, frames: 4800, value: 0.25))
            try b.enqueueSamples(Signals.impulse(at: 0, frames: 1000, value: 0.25, channels: 2))
            // c carries its impulse 0.1 s in: 4410 frames at 44.1 kHz = 4800 device frames.
            try c.enqueueSamples(Signals.impulse(at: 4410, frames: 8820, value: 0.5))
            let period = Int64(rig.device.periodFrames)
            let base = rig.engine.nearestStartTime(atOrAfter: rig.engine.currentTime().sampleTime)
            let start = (base / period + 2) * period + 100        // 100 frames into a period
            let group = try rig.engine.start([a, b, c], at: start)
            #expect(group.sampleTime == start && group.framesLate == 0)
            #expect(rig.capture.wait(timeout: 5) { rig.capture.currentFrameTime.map { Int64($0) > (start + 9600) & 0xFFFF_FFFF } ?? false })
            let left = rig.capture.channel(0)
            let first = try #require(rig.capture.firstNonSilentRecordedFrame(channel: 0))
            #expect(Int64(rig.capture.frameTime(ofRecordedFrame: first)) == start & 0xFFFF_FFFF)
            #expect(left[first] == 0.5)                               // a + b on the same frame
            #expect(rig.capture.channel(1)[first] == 0.5)
            // c's impulse (band-limited by the rate converter) peaks exactly 4800 frames later.
            let window = Array(left[(first + 4000)..<(first + 5600)])
            #expect(Signals.peakIndex(window) + 4000 == 4800)
            #expect(rig.capture.droppedFrames == 0)
            // Each ran dry after its buffer: reported when stopped, from the frame it ran dry.
            try a.stop()
            try b.stop()
            try c.stop()
            #expect(rig.capture.wait(timeout: 3) { rig.engine.discontinuities.filter { $0.kind == .underrun }.count == 3 })
            let dry = Dictionary(uniqueKeysWithValues: rig.engine.discontinuities.map { ($0.queues[0], $0.sampleTime) })
            #expect(dry["a"] == start + 4800 && dry["b"] == start + 1000)
        }

        @Test("per-queue ports carry each layer on its own")
        func perQueuePorts() throws {
            let server = try JACKServer()
            let rig = try Rig(server: server)
            let q = try rig.engine.makeOutputQueue(format: stereo, name: "drums") { _, _ in }
            let names = try q.enableDirectOutputs()
            #expect(names == ["lockstep-under-test:drums_1", "lockstep-under-test:drums_2"])
            try server.waitForPort(names[0])
            let own = try JACKCapture(server: server, sources: names, maxSeconds: 4, name: "own-capture")
            try own.start()
            #expect(own.waitForFrames(2048, timeout: 5))
            try q.enqueueSamples(Signals.constant(0.125, frames: 4800, channels: 2))
            try q.stop(immediately: false)
            let start = try rig.engine.start([q])
            #expect(own.wait(timeout: 5) { own.currentFrameTime.map { Int64($0) > (start.sampleTime + 6000) & 0xFFFF_FFFF } ?? false })
            let first = try #require(own.firstNonSilentRecordedFrame(channel: 1))
            #expect(Int64(own.frameTime(ofRecordedFrame: first)) == start.sampleTime & 0xFFFF_FFFF)
            #expect(Array(own.channel(1)[first..<(first + 4800)]).allSatisfy { $0 == 0.125 })
            #expect(own.channel(1)[first + 4800] == 0)
            let ports = try JACKGraph.listPorts(server: server.name)
            #expect(ports.contains { $0.name == names[0] && $0.direction == "output" })
            try q.dispose()
            #expect(own.wait(timeout: 3) { ((try? server.portNames(matching: "drums")) ?? ["x"]).isEmpty })
        }

        @Test("xruns forced by a stalling client are each reported with their sample time")
        func xruns() throws {
            let server = try JACKServer()
            let rig = try Rig(server: server)
            let q = try rig.engine.makeOutputQueue(format: stereo) { _, _ in }
            try q.enqueueSamples(Signals.constant(0.1, frames: 48000 * 4, channels: 2))
            let timeline = try q.makeTimeline()
            _ = try q.currentTime(timeline: timeline)
            try rig.engine.start([q])
            let staller = try JACKStaller(server: server)
            try staller.start()
            let before = rig.engine.currentTime().sampleTime
            #expect(staller.stallAndWait(forMicroseconds: 30_000))
            #expect(rig.capture.wait(timeout: 3) { rig.engine.discontinuities.contains { $0.kind == .xrun } })
            let after = rig.engine.currentTime().sampleTime
            let xruns = rig.engine.discontinuities.filter { $0.kind == .xrun }
            #expect(!xruns.isEmpty)
            for xrun in xruns {
                #expect(xrun.sampleTime >= before - 1024 && xrun.sampleTime <= after, "\(xrun)")
                #expect(xrun.queues == [q.name])
                #expect(xrun.length >= 0)
                print("xrun: \(xrun), delay \(xrun.detail) µs")
            }
            // The device timeline counts the frames rendered plus those an xrun skipped: it stays
            // mapped to JACK's frame clock (no period change here, so no clock jump).
            #expect(rig.device.jackFrameOffset == 0)
            #expect(!rig.engine.discontinuities.contains { $0.kind == .clockJump })
            #expect(try q.currentTime(timeline: timeline).discontinuity)
            staller.stop()
        }

        @Test("killing the server stops the queues with an error, fires the listeners, and never hangs")
        func serverDeath() throws {
            let server = try JACKServer()
            let device = try JACKDevice(options: .init(clientName: "lockstep-dying", serverName: server.name,
                                                       connectToPhysicalOutputs: false))
            let engine = try Engine(device: device)
            let running = Recorder<Bool>()
            let returned = Recorder<Int>()
            let q = try engine.makeOutputQueue(format: stereo) { _, buffer in returned.append(buffer.frameCount) }
            try q.addPropertyListener(.isRunning) { queue, _ in running.append(queue.isRunning) }
            try q.enqueueSamples(Signals.constant(0.1, frames: 48000 * 10, channels: 2))
            try engine.start([q])
            #expect(ThreadedTestDevice.wait(timeout: 5) { running.values == [true] })
            server.kill()
            #expect(ThreadedTestDevice.wait(timeout: 5) { engine.deviceError != nil })
            #expect(ThreadedTestDevice.wait(timeout: 5) { running.values == [true, false] })
            #expect(ThreadedTestDevice.wait(timeout: 5) { returned.values == [48000 * 10] })
            #expect(engine.discontinuities.last?.kind == .shutdown)
            #expect(engine.deviceError?.message.contains("JACK server went away") == true)
            let error = #expect(throws: AudioQueueError.self) { try q.start() }
            #expect(error?.code == .cannotStart)
            #expect(!device.isRunning)
        }

        @Test("freewheel on and off is reported as two discontinuities")
        func freewheel() throws {
            let server = try JACKServer()
            let rig = try Rig(server: server)
            let q = try rig.engine.makeOutputQueue(format: stereo) { _, _ in }
            try q.enqueueSamples(Signals.constant(0.1, frames: 48000, channels: 2))
            try rig.engine.start([q])
            try server.withClient(named: "freewheeler") { client in
                _ = jack_set_freewheel(client, 1)
                usleep(200_000)
                _ = jack_set_freewheel(client, 0)
            }
            #expect(rig.capture.wait(timeout: 5) { rig.engine.discontinuities.filter { $0.kind == .freewheel }.count == 2 })
            let wheel = rig.engine.discontinuities.filter { $0.kind == .freewheel }
            #expect(wheel.map(\.detail) == [1, 0])
            // The off event carries the frames rendered in freewheel mode: all of them on the timeline.
            #expect(wheel[1].length == wheel[1].sampleTime - wheel[0].sampleTime)
            #expect(wheel[1].length > 0)
            #expect(rig.device.jackFrameOffset == 0)
        }

        @Test("a period change mid-play keeps every frame and the alignment, and is reported")
        func bufferSizeChange() throws {
            let server = try JACKServer()
            let rig = try Rig(server: server, maxSeconds: 8)
            let ramp = Signals.ramp(frames: 48000 * 3, start: 1)
            let q = try rig.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1)) { _, _ in }
            try q.enqueueSamples(ramp)
            try q.stop(immediately: false)
            let start = try rig.engine.start([q])
            #expect(rig.capture.wait(timeout: 5) { rig.capture.currentFrameTime.map { Int64($0) > (start.sampleTime + 24000) & 0xFFFF_FFFF } ?? false })
            try server.setBufferSize(512)
            #expect(rig.capture.wait(timeout: 6) { !q.isRunning })
            #expect(rig.capture.waitForFrames(rig.capture.frames + 2048, timeout: 3))
            let left = rig.capture.channel(0)
            let first = try #require(rig.capture.firstNonSilentRecordedFrame(channel: 0))
            let played = Array(left[first..<min(left.count, first + ramp.count)])
            #expect(played.count == ramp.count)
            #expect(played == ramp)                                   // not a frame lost or repeated
            #expect(rig.engine.discontinuities.contains { $0.kind == .bufferSizeChange && $0.detail == 512 })
            #expect(!rig.engine.discontinuities.contains { $0.kind == .underrun })
        }
    }
}
