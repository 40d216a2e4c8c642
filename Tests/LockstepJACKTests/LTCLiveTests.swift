import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepTestSupport
import LockstepTimecode
import Testing

extension JACKTests {
    /// `session run --ltc-out --mtc-out`: the LTC port captured from the graph and decoded by
    /// libltc's decoder, the MTC port read by a JACK MIDI input of the test's own.
    @Suite("lockstep session run --ltc-out --mtc-out: timecode on its ports, on the session's samples through a seek and a pause", .serialized)
    struct LTCLiveTests {
        @Test("every LTC frame and MTC quarter-frame is on the sample its session sample plays on the master output; a seek relocates both (MTC with a full frame), a pause silences them, a resume goes on from the paused frame")
        func ltcLive() throws { try retryingOnXruns("LTCLiveTests", run) }

        func run(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-ltc-live")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000 * 30), format: format)
            try FileFixtures.writeText(path: temp.file("show.yaml"), "channels: 1\ncues:\n  - { name: bed, file: bed.wav, at: 0 }\n")
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 30)
            try capture.start()
            let receiver = try JACKDevice(options: .init(clientName: "mtc-rx", serverName: server.name, channelCount: 1,
                                                         connectToPhysicalOutputs: false, midiInputPortName: "midi_in"))
            let midi = try #require(receiver.midiInput)
            try receiver.start()
            defer { receiver.stop() }
            let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "ltc",
                                         "--connect", capture.portNames[1], "--ltc-out", capture.portNames[0], "--mtc-out", midi.portName,
                                         "--ltc-fps", "25", "--ltc-start", "01:00:00:00", "--control", "-"], withInput: true)
            defer { if running.isRunning { running.send(SIGKILL) } }
            #expect(capture.wait(timeout: 10) { capture.firstNonSilentRecordedFrame(channel: 1) != nil })
            let rolled = capture.frames
            #expect(capture.wait(timeout: 10) { capture.frames > rolled + 48000 })
            #expect(running.send(line: "seek 10", awaiting: "seek to"))
            let sought = capture.frames
            #expect(capture.wait(timeout: 10) { capture.frames > sought + 48000 })
            #expect(running.send(line: "pause", awaiting: "pause"))
            #expect(capture.waitForLatest(frames: 4800, timeout: 5) { $0 == 0 }, "the LTC goes on while paused")
            #expect(running.send(line: "resume", awaiting: "resume"))
            let resumed = capture.frames
            #expect(capture.wait(timeout: 10) { capture.frames > resumed + 48000 })
            // Ctrl-C: the show fades out and ends (130) without waiting for the bed to end.
            running.send(SIGINT)
            let result = running.wait(timeout: 20)
            #expect(result.status == 130, "\(result.stderr)")
            capture.stop()
            xrun.set(capture.xrunCount > 0)

            let ltc = capture.channel(0), master = capture.channel(1)
            try FileFixtures.writeWAV(path: temp.file("ltc.wav"), samples: ltc, format: format)
            let frames = try LTCDecoder.frames(path: temp.file("ltc.wav"), channel: 0, samplesPerFrame: 1920)
            let clock = try TimecodeClock(rate: .fps25, sampleRate: 48000, start: Timecode(hours: 1, minutes: 0, seconds: 0, frames: 0))
            // Split into runs of frames with one offset (capture index − session sample).
            var segments: [[(frame: Int64, offset: Int64)]] = []
            var previousFrame: Int64?
            var misread: [String] = []
            for decoded in frames {
                guard let label = try? Timecode(parsing: decoded.timecode, rate: .fps25) else {
                    misread.append("\(decoded)")
                    continue
                }
                let frame = label.frameNumber(at: .fps25) - clock.start.frameNumber(at: .fps25)
                // The edge that ended this frame is the next frame's first sample.
                let offset = decoded.edge - clock.startSample(ofFrame: frame + 1)
                if let last = segments.last?.last, last.offset == offset, previousFrame == frame - 1 {
                    segments[segments.count - 1].append((frame, offset))
                } else {
                    segments.append([(frame, offset)])
                }
                previousFrame = frame
            }
            let summary = segments.map { "\($0.count) frames from \(clock.timecode(ofFrame: $0.first!.frame)) at offset \($0.first!.offset)" }
            #expect(misread.isEmpty, "labels that are no timecode: \(misread)")
            try #require(segments.count == 3, "\(summary)")
            // The start: frame 0's first sample is session sample 0, where the bed starts on out_1.
            let bedStart = try #require(master.firstIndex { $0 != 0 })
            #expect(segments[0].first!.frame <= 1 && segments[0][0].offset == Int64(bedStart), "\(summary); the bed at \(bedStart)")
            // After the seek to 10 s, the frames from 01:00:10:00 (or the next one) on; the master
            // and the LTC restart together, after the gap of the relocation, on the sample of
            // session time 10 s, the first sample of frame 250.
            let afterSeek = segments[1]
            #expect((250...251).contains(afterSeek[0].frame), "\(summary)")
            let seekIndex = Int(afterSeek[0].offset + clock.startSample(ofFrame: 250))
            #expect(master[seekIndex - 1] == 0 && master[seekIndex] == 0.125, "\(summary): master around \(seekIndex)")
            #expect(ltc[seekIndex - 1] == 0 && ltc[seekIndex] != 0, "\(summary): LTC around \(seekIndex)")
            // The resume goes on from the paused frame (or the next one), after silence.
            let beforePause = afterSeek.last!.frame, afterResume = segments[2][0].frame
            #expect((beforePause...(beforePause + 3)).contains(afterResume), "\(summary)")
            let pausedFrom = Int(afterSeek.last!.offset + clock.startSample(ofFrame: beforePause + 1))
            let resumedAt = Int(segments[2][0].offset + clock.startSample(ofFrame: afterResume))
            #expect(ltc[pausedFrom..<resumedAt].contains(0), "\(summary)")
            #expect(segments.allSatisfy { $0.count >= 20 }, "\(summary)")
            // The resume plays on where the master's bed comes back after the pause's silence.
            let silent = try #require(master[pausedFrom...].firstIndex(of: 0))
            let resumeIndex = try #require(master[silent...].firstIndex { $0 != 0 })
            try checkMTC(midi.read(timeout: 0.5).map { (receiver.jackFrameTime(forSampleTime: $0.sampleTime), $0.bytes) },
                         starts: [(0, bedStart), (480_000, seekIndex), (Int64(resumeIndex) - segments[2][0].offset, resumeIndex)],
                         capture: capture)
        }

        @Test("lockstep play --ltc-out: the file's first sample plays where the LTC's frame 10:00:00:00 starts, every frame after it on its sample")
        func playLTC() throws { try retryingOnXruns("LTCLiveTests.play", playRun) }

        func playRun(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-ltc-play")
            let format = StreamFormat(sampleRate: 48000, channelCount: 1)
            try FileFixtures.writeWAV(path: temp.file("bed.wav"), samples: Signals.constant(0.125, frames: 48000), format: format)
            let server = try JACKServer(period: 256)
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 10)
            try capture.start()
            let result = try CLI.run(["play", temp.file("bed.wav"), "--server", server.name, "--client-name", "ltc-play",
                                      "--connect", capture.portNames[1], "--ltc-out", capture.portNames[0],
                                      "--ltc-fps", "30", "--ltc-start", "10:00:00:00"], timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            capture.stop()
            xrun.set(capture.xrunCount > 0)
            let master = capture.channel(1)
            try FileFixtures.writeWAV(path: temp.file("ltc.wav"), samples: capture.channel(0), format: format)
            let frames = try LTCDecoder.frames(path: temp.file("ltc.wav"), channel: 0, samplesPerFrame: 1600)
            let bedStart = try #require(master.firstIndex { $0 != 0 })
            // At 30 fps and 48 kHz frame n starts 1600 n samples after the file's first sample (the
            // decoder may miss frame 0: it locks on the transitions before a frame).
            let clock = try TimecodeClock(rate: .fps30, sampleRate: 48000, start: Timecode(hours: 10, minutes: 0, seconds: 0, frames: 0))
            let numbers = frames.map { (try? Timecode(parsing: $0.timecode, rate: .fps30)).map { $0.frameNumber(at: .fps30) - clock.start.frameNumber(at: .fps30) } ?? -1 }
            let misplaced = zip(frames, numbers).enumerated().filter { index, pair in
                pair.1 != (numbers.first ?? 0) + Int64(index) || pair.0.edge != Int64(bedStart) + (pair.1 + 1) * 1600
            }
            #expect(frames.count >= 25 && (numbers.first ?? 9) <= 1 && misplaced.isEmpty,
                    "\(frames.count) frames from \(frames.first?.timecode ?? "-"); the bed at \(bedStart); misplaced: \(misplaced.prefix(3))")
        }

        @Test("session run --transport --ltc-out: every LTC frame starts on the transport frame of its session sample, through a stop and a relocation")
        func transportLTC() throws { try retryingOnXruns("LTCLiveTests.transport", transportRun) }

        func transportRun(_ xrun: XrunFlag) throws {
            let temp = try TemporaryTestDirectory(prefix: "lockstep-ltc-transport")
            let step: Float = 1.0 / 65536
            try FileFixtures.writeWAV(path: temp.file("ramp.wav"), samples: Signals.ramp(frames: 48000 * 6, start: 1, step: step),
                                      format: StreamFormat(sampleRate: 48000, channelCount: 1))
            try FileFixtures.writeText(path: temp.file("show.yaml"), "channels: 1\ncues: [ { file: ramp.wav, at: 0 } ]\n")
            let server = try JACKServer()
            let capture = try JACKCapture(server: server, sources: [], channels: 2, maxSeconds: 8)
            try capture.start()
            let (result, check) = try TransportScript.runFollower(
                ["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "ltc-transport", "--transport",
                 "--connect", capture.portNames[0], "--ltc-out", capture.portNames[1]],
                clientName: "ltc-transport", server: server, capture: capture, step: step)
            #expect([0, 130].contains(result.status), "\(result.stderr)")
            capture.stop()
            xrun.set(capture.xrunCount > 0)
            #expect(check.mismatches == 0 && check.sawRelocatedSegment, "the master against the transport: \(check)")
            // Each decoded frame's end: the transport frame there is the next frame's first sample.
            var transportFrames = [Int64?](repeating: nil, count: capture.frames)
            for cycle in capture.cycles where cycle.transportRolling && cycle.firstRecordedFrame + cycle.frames <= transportFrames.count {
                for i in 0..<cycle.frames { transportFrames[cycle.firstRecordedFrame + i] = Int64(cycle.transportFrame) + Int64(i) }
            }
            try FileFixtures.writeWAV(path: temp.file("ltc.wav"), samples: capture.channel(1), format: StreamFormat(sampleRate: 48000, channelCount: 1))
            let frames = try LTCDecoder.frames(path: temp.file("ltc.wav"), channel: 0, samplesPerFrame: 1920)
            let clock = try TimecodeClock(rate: .fps25, sampleRate: 48000)
            var misplaced: [String] = []
            var relocated = false
            for frame in frames {
                guard let label = try? Timecode(parsing: frame.timecode, rate: .fps25), frame.edge >= 0, frame.edge < transportFrames.count,
                      let transport = transportFrames[Int(frame.edge)] else {
                    misplaced.append("\(frame): no transport frame there")
                    continue
                }
                let number = label.frameNumber(at: .fps25)
                if transport != clock.startSample(ofFrame: number + 1) { misplaced.append("\(frame): transport \(transport)") }
                if clock.startSample(ofFrame: number) >= 96000 { relocated = true }
            }
            #expect(frames.count >= 24 && relocated && misplaced.isEmpty, "\(frames.count) frames; misplaced: \(misplaced.prefix(4))")
        }

        /// Checks the MTC received: a full frame then quarter-frames on every sample, 480 apart
        /// (48 kHz, 25 fps), from each start (session sample and capture index), each eight
        /// carrying the label of their first quarter's even frame.
        func checkMTC(_ events: [(frame: UInt32, bytes: [UInt8])], starts: [(position: Int64, index: Int)], capture: JACKCapture) throws {
            let fulls = events.enumerated().filter { $0.element.bytes.first == 0xF0 }
            try #require(fulls.count == starts.count, "\(fulls.count) full frames: \(fulls.map(\.element.bytes))")
            for (number, full) in fulls.enumerated() {
                let start = starts[number]
                let startFrame = capture.frameTime(ofRecordedFrame: start.index)
                #expect(full.element.frame == startFrame, "full frame \(number) at \(full.element.frame), its start at \(startFrame)")
                let b = full.element.bytes
                // hh = rate 25 (1) << 5 | hours; the label of the frame the start's sample is in.
                let label = Int64(b[6]) * 60 * 25 + Int64(b[7]) * 25 + Int64(b[8]) + Int64(Int(b[5] & 0x1F) - 1) * 3600 * 25
                #expect(b[0..<5] == [0xF0, 0x7F, 0x7F, 0x01, 0x01] && b[5] >> 5 == 1 && b[9] == 0xF7, "\(b)")
                let position = start.position
                #expect(label == position / 1920, "full frame \(b) for session sample \(position)")
                let end = number + 1 < fulls.count ? fulls[number + 1].offset : events.count
                let quarters = events[(full.offset + 1)..<end]
                #expect(quarters.count >= 80, "\(quarters.count) quarter-frames after full frame \(number)")
                var pieces: [Int] = []
                for (k, quarter) in quarters.enumerated() {
                    // Quarter q of session time plays on the capture's index of its sample.
                    let q = (position + 479) / 480 + Int64(k)
                    let expected = startFrame &+ UInt32(q * 480 - position)
                    if quarter.frame != expected || quarter.bytes.count != 2 || Int(quarter.bytes[1] >> 4) != Int(q % 8) {
                        Issue.record("quarter \(q) \(quarter.bytes) at \(quarter.frame), expected at \(expected)")
                        break
                    }
                    pieces.append(Int(quarter.bytes[1] & 0xF))
                    if q % 8 == 7 && pieces.count == 8 {
                        let frames = Int64(pieces[0] | pieces[1] << 4), seconds = Int64(pieces[2] | pieces[3] << 4)
                        let minutes = Int64(pieces[4] | pieces[5] << 4), hours = Int64(pieces[6] | (pieces[7] & 1) << 4)
                        let count = ((hours - 1) * 3600 + minutes * 60 + seconds) * 25 + frames
                        #expect(count == (q - 7) / 4 && pieces[7] >> 1 == 1, "pieces \(pieces) for quarter \(q - 7)")
                    }
                    if q % 8 == 7 { pieces = [] }
                }
            }
        }
    }
}
