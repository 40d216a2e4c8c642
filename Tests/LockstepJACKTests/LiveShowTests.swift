import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepSession
import LockstepShow
import LockstepTestSupport
import Testing

extension JACKTests {
    /// The show engine as a Swift user drives it, without the CLI: ``LiveLayers`` and
    /// ``LiveSession`` on a device of their own, heard by an independent capture client.
    @Suite("the show engine (LockstepShow) driven from Swift", .serialized)
    struct LiveShowTests {
        let temp: TemporaryTestDirectory
        static let step: Float = 1.0 / 65536

        init() throws { temp = try TemporaryTestDirectory(prefix: "lockstep-liveshow") }

        /// A private server at period 256 and a running stereo capture client on it.
        func serverAndCapture() throws -> (JACKServer, JACKCapture) {
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 6)
            try capture.start()
            #expect(capture.waitForFrames(2048, timeout: 5))
            return (server, capture)
        }

        /// Steps `step` every 5 ms until it says why the show ends (nil after `timeout` seconds).
        func run(timeout: Double, _ step: () throws -> ShowEnd?) throws -> ShowEnd? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let end = try step() { return end }
                usleep(5_000)
            }
            return nil
        }

        @Test("LiveSession plays a session with a GO to its end by itself: the capture and its recording equal the offline render, sample for sample")
        func session() throws {
            try retryingOnXruns("LiveShowTests.session") { xrun in
                // The GO lands 0.1 s into the session, placed ahead of what plays.
                try sessionRun(xrun) { player in
                    let start = try player.go("bell", at: 4_800).start
                    #expect(start == 4_800)
                    return start
                }
            }
        }

        @Test("a plain GO of the armed standby cue, over a cue playing on its layer, starts on the next cycle; the capture equals the offline render of that GO, sample for sample")
        func armedGo() throws {
            try retryingOnXruns("LiveShowTests.armedGo") { xrun in
                try sessionRun(xrun) { player in
                    // Once the cue on the standby cue's layer ('late', at 0.3 s) plays.
                    while player.position < 16_000 { usleep(1_000) }
                    let start = try player.go().start
                    #expect(player.standbyStatistics == SessionPlayer.StandbyStatistics(armed: 1, missed: 0, unarmed: 0),
                            "\(player.standbyStatistics)")
                    #expect(start >= 16_000 && start < 24_000)
                    return start
                }
            }
        }

        func sessionRun(_ xrun: XrunFlag, fire: (SessionPlayer) throws -> Int64) throws {
            let (server, capture) = try serverAndCapture()
            _ = try temp.writeAudio("bed.wav", Signals.ramp(frames: 24_000, start: 1, step: Self.step))
            _ = try temp.writeAudio("bell.wav", Signals.ramp(frames: 9_600, start: -1, step: Self.step))
            let path = temp.file("show.yaml")
            try """
                layers:
                  bed: { gain: -6dB }
                  fx: { gain: 0dB }
                cues:
                  - { name: bed, layer: bed, file: bed.wav, at: 0 }
                  - { name: late, layer: fx, file: bell.wav, at: 0.3 }
                  - { name: bell, layer: fx, file: bell.wav, at: manual }
                """.write(toFile: path, atomically: false, encoding: .utf8)
            let recording = temp.file("mix.wav")
            let device = try JACKDevice(options: .init(clientName: "lockstep-liveshow", serverName: server.name,
                                                       connectToPhysicalOutputs: false))
            var options = LiveSession.Options()
            options.connections = capture.portNames
            options.recordPath = recording
            let show = try LiveSession(session: try Session.load(path: path), device: device, options: options)
            try show.start()
            let origin = try #require(show.startSampleTime)
            let goAt = try fire(show.player)
            let end = try run(timeout: 10) { try show.step(canStillCommand: false) }
            #expect(end == .finished)
            show.fadeOut()
            let outcome = show.stop()
            device.stop()
            #expect(outcome.error == nil)
            #expect(show.player.lateStarts.isEmpty, "\(show.player.lateStarts)")
            #expect(!show.engine.discontinuities.contains { $0.kind == .underrun }, "\(show.engine.discontinuities)")
            xrun.set(capture.xrunCount > 0 || show.engine.discontinuities.contains { $0.kind == .xrun })

            // The same session and GO offline.
            let length = Int(try #require(show.player.timeline.end))
            #expect(length == max(24_000, Int(goAt) + 9_600))
            let offlineDevice = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: 2), maximumFramesPerRender: 256)
            let offline = try SessionPlayer(session: try Session.load(path: path),
                                            engine: try Engine(device: offlineDevice, rateConverter: SoxrRateConverter.factory))
            try offline.start(from: 0, at: 0)
            _ = try offline.go("bell", at: goAt)
            var expected: [Float] = []
            while expected.count < 2 * length { expected += try offlineDevice.renderFloat(frames: 256) }
            expected = Array(expected.prefix(2 * length))
            #expect(expected.contains { $0 != 0 })

            let first = try #require(capture.recordedIndex(atFrameTime: origin))
            let left = capture.channel(0), right = capture.channel(1)
            #expect(left.count >= first + length)
            let heard = (0..<min(length, left.count - first)).flatMap { [left[first + $0], right[first + $0]] }
            let differing = heard.indices.filter { heard[$0] != expected[$0] }
            #expect(differing.isEmpty, "\(differing.count) captured samples differ, the first at frame \((differing.first ?? 0) / 2)")
            let recorded = try readAudio(recording)
            #expect(outcome.recording?.startSampleTime == origin)
            #expect(Array(recorded.samples.prefix(2 * length)) == expected, "the recording differs from the offline render")
        }

        @Test("LiveLayers plays files with an offset and a gain, every first frame on its sample, ends when they have finished; the capture equals `render` of the same files")
        func layers() throws { try retryingOnXruns("LiveShowTests.layers", layersRun) }

        func layersRun(_ xrun: XrunFlag) throws {
            let (server, capture) = try serverAndCapture()
            let a = try temp.writeAudio("a.wav", Signals.ramp(frames: 12_000, start: 1, step: Self.step))
            let b = try temp.writeAudio("b.wav", Signals.sine(frequency: 441, sampleRate: 44100, frames: 11_025, amplitude: 0.25, channels: 2),
                                        rate: 44100, channels: 2)
            let reference = temp.newFile("reference.wav")
            let render = try CLI.run(["render", a, b, "--gain", "0", "--gain", "-6", "--offset", "0", "--offset", "0.1", "-o", reference])
            #expect(render.status == 0, "\(render.stderr)")
            let expected = try readAudio(reference).samples

            let device = try JACKDevice(options: .init(clientName: "lockstep-livelayers", serverName: server.name,
                                                       connectToPhysicalOutputs: false))
            var layers: [LiveLayers.Layer] = []
            for (path, gain, offset) in [(a, 0.0, 0.0), (b, -6.0, 0.1)] {
                let format = try AudioFileReader(path: path).format
                layers.append(LiveLayers.Layer(path: path, format: format, gainDB: gain, offset: .seconds(offset)))
            }
            var options = LiveLayers.Options()
            options.connections = capture.portNames
            let show = try LiveLayers(layers: layers, device: device, options: options)
            try show.start()
            let end = try run(timeout: 10) { try show.step() }
            #expect(end == .finished)
            let stoppedAt = show.fadeOut()
            let outcome = show.stop()
            device.stop()
            #expect(outcome.error == nil)
            #expect(show.lateStarts == [0, 0])
            #expect(stoppedAt - show.startSampleTime >= Int64(expected.count / 2))
            xrun.set(capture.xrunCount > 0 || show.engine.discontinuities.contains { $0.kind == .xrun })

            let first = try #require(capture.recordedIndex(atFrameTime: show.startSampleTime))
            let left = capture.channel(0), right = capture.channel(1)
            let frames = expected.count / 2
            #expect(left.count >= first + frames)
            let heard = (0..<min(frames, left.count - first)).flatMap { [left[first + $0], right[first + $0]] }
            let differing = heard.indices.filter { heard[$0] != expected[$0] }
            #expect(differing.isEmpty, "\(differing.count) captured samples differ from render, the first at frame \((differing.first ?? 0) / 2)")
        }
    }
}
