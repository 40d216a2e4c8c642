import AudioQueueCompat
import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

extension JACKTests {
    /// Published-style programs at a rate other than the server's (44.1 kHz on 48 kHz) with small
    /// buffers, run as processes against a private dummy-driver jackd: nothing they record or
    /// play may be lost.
    @Suite("Audio Queue data loss at another rate", .serialized)
    struct AQDataLossTests {
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-loss") }

        /// Device frames per 44.1 kHz frame.
        static let ratio = 48000.0 / 44100.0

        /// Runs AQRecorder (Apple's recording guide: 3 buffers, AudioFileWritePackets, re-enqueue)
        /// at 44.1 kHz with `bufferSeconds` buffers for `seconds` on a 48 kHz server, recording a
        /// ramp whose every frame holds its own index (24-bit: one step of 2⁻²³ a frame), and
        /// checks the take holds every frame from the first recorded one to the stop.
        func recordAndCheck(bufferSeconds: Double, seconds: Double) throws {
            try retryingOnXruns("AQDataLossTests") { try recordAndCheck(bufferSeconds: bufferSeconds, seconds: seconds, $0) }
        }

        func recordAndCheck(bufferSeconds: Double, seconds: Double, _ xrun: XrunFlag) throws {
            let server = try JACKServer(sampleRate: 48000, period: 256)
            let ramp = try JACKRampSource(server: server, channels: 1, signal: .ramp(start: 1, step: 1.0 / 8_388_608))
            try ramp.start()
            defer { ramp.stop() }
            let path = temp.newFile("take-\(bufferSeconds).aiff")
            let result = try runExample("AQRecorder", [path, "--seconds", String(seconds), "--server", server.name,
                                                       "--bits", "24", "--buffer-seconds", String(bufferSeconds),
                                                       "--connect", ramp.portNames[0], "--connect", ramp.portNames[0]])
            #expect(result.status == 0, "\(result.stderr)")
            let xruns = ramp.xrunCount
            // A server xrun skips a cycle of the ramp's counter: the take leaves the line.
            xrun.set(xruns > 0)
            let stopLine = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("stop requested at JACK frame ") })
            let stopFrame = try #require(UInt32(stopLine.split(separator: " ").last!))
            let firstFrameTime = try #require(ramp.firstFrameTime)
            // The ramp frame that was playing when the stop was asked for.
            let rampAtStop = Int64(stopFrame &- firstFrameTime)
            let (format, samples) = try integerSamples(path)
            #expect(format.sampleRate == 44100 && format.channelCount == 2)
            // Sample value v is ramp frame v − 1 (the ramp starts at 1): device time, on the ramp's clock.
            let left = stride(from: 0, to: samples.count, by: 2).map { Int64(samples[$0] >> 8) - 1 }
            let frames = left.count
            try #require(frames > 1000, "\(frames) frames; \(result.stdout)")
            // The converter's edges (its filter sees silence before the first and after the last
            // frame, and rings) are left out of the line fit: 200 frames at each end.
            let edge = 200
            let a = edge, b = frames - 1 - edge
            let slope = Double(left[b] - left[a]) / Double(b - a)
            // Every frame where a continuous, gapless take puts it: on the line through the
            // settled ends, within 1.5 steps (resampling and 24-bit rounding). A frame lost or
            // repeated anywhere moves everything after it off the line by at least 1.09 steps per
            // frame, and the slope off 48/44.1.
            let offLine = (a...b).filter { abs(Double(left[$0] - left[a]) - Double($0 - a) * slope) > 1.5 }
            var breaks = 0
            var previous = -10
            for index in offLine { if index - previous > 400 { breaks += 1 }; previous = index }
            #expect(breaks == 0, "\(offLine.count) frames off the line in \(breaks) places with \(xruns) xruns, first at \(offLine.first ?? -1) of \(frames): \(offLine.first.map { Array(left[max(0, $0 - 3)...min(frames - 1, $0 + 3)]) } ?? [])")
            #expect(abs(slope - Self.ratio) < 0.0005, "slope \(slope), 48/44.1 = \(Self.ratio)")
            // The take starts at the first frame recorded and ends where the stop was asked for:
            // its last frame is the ramp frame playing then (the stop takes effect at the next
            // cycle, so up to one period + a cycle of scheduling later).
            let firstDevice = Double(left[a]) - Double(a) * Self.ratio
            let lastDevice = Double(left[a]) + Double(frames - 1 - a) * Self.ratio
            let expectedFrames = (Double(rampAtStop) - firstDevice) / Self.ratio + 1
            let lateFrames = lastDevice - Double(rampAtStop)
            print("AQRecorder 44.1 kHz, \(bufferSeconds * 1000) ms buffers, \(seconds) s: \(frames) frames recorded; "
                  + "\(Int(expectedFrames)) from the first recorded frame to the stop request (\(Int(lateFrames)) device frames after it); xruns \(xruns)")
            #expect(lateFrames >= -2 && lateFrames <= 2 * 256 + 4,
                    "the take ends \(lateFrames) device frames after the stop was asked for (\(frames) frames, \(Int(expectedFrames)) expected)")
            #expect(result.stdout.contains("recorded \(frames) packets"))
            #expect(Double(frames) > seconds * 44100 * 0.9, "\(frames) frames in \(seconds) s")
        }

        @Test("a 44.1 kHz recorder with 10 ms buffers on a 48 kHz server writes every frame up to the stop")
        func recorder10ms() throws { try recordAndCheck(bufferSeconds: 0.01, seconds: 1.5) }

        @Test("a 44.1 kHz recorder with 20 ms buffers on a 48 kHz server writes every frame up to the stop")
        func recorder20ms() throws { try recordAndCheck(bufferSeconds: 0.02, seconds: 1.5) }

        @Test("a 44.1 kHz recorder with 5 ms buffers on a 48 kHz server writes every frame up to the stop")
        func recorder5ms() throws { try recordAndCheck(bufferSeconds: 0.005, seconds: 1.5) }

        /// Plays `path` through AQPlayer (Apple's playback callback: read packets, enqueue, stop at
        /// the end) with `packets`-packet buffers on a 48 kHz server with `period`-frame cycles,
        /// and returns what the player printed and the server's output, recorded by an
        /// independent JACK client.
        func playThroughJACK(_ path: String, packets: Int, period: Int) throws -> (result: CLI.Result, audio: [Float], xruns: Int) {
            let server = try JACKServer(sampleRate: 48000, period: period)
            let capture = try JACKCapture(server: server, sources: [], channels: 1, maxSeconds: 8)
            try capture.start()
            defer { capture.stop() }
            let result = try runExample("AQPlayer", [path, "--server", server.name, "--packets", String(packets),
                                                     "--connect", capture.portNames[0]])
            #expect(result.status == 0, "\(result.stderr)")
            capture.stop()
            return (result, capture.channel(0), capture.xrunCount)
        }

        /// Plays a 1.4 s 44.1 kHz ramp (0.2 … 0.9, float) through AQPlayer with `packets`-frame
        /// buffers on a 48 kHz server with `period`-frame cycles, records the server's output, and
        /// checks every frame is heard, once, in order.
        func playAndCheck(packets: Int, period: Int) throws {
            try retryingOnXruns("AQDataLossTests") { try playAndCheck(packets: packets, period: period, $0) }
        }

        func playAndCheck(packets: Int, period: Int, _ xrun: XrunFlag) throws {
            let fileFrames = 61_740                                   // 1.4 s at 44.1 kHz
            let ramp = (0..<fileFrames).map { Float(0.2 + 0.7 * Double($0) / Double(fileFrames - 1)) }
            let path = temp.file("ramp-\(packets)-\(period).wav")
            try writeFile(path, ramp, rate: 44100, channels: 1, format: .float32)
            let (result, audio, xruns) = try playThroughJACK(path, packets: packets, period: period)
            // An xrun of the server loses frames at JACK itself, before any client.
            xrun.set(xruns > 0)
            #expect(result.stdout.contains("played \(fileFrames) packets"), "\(result.stdout)")
            // 1.4 s at 48 kHz. The ramp starts at 0.2 and ends at 0.9, so a threshold of 0.1 (half
            // the first value) cuts the converted edges within a frame of where they belong.
            let expected = Int((Double(fileFrames) * Self.ratio).rounded())      // 67 200
            let heard = audio.indices.filter { audio[$0] > 0.1 }
            let first = heard.first ?? 0, last = heard.last ?? 0
            let span = heard.isEmpty ? 0 : last - first + 1
            // The largest step between neighbouring frames inside the sound (100 frames in from
            // the edges, where the converter rings): the ramp climbs
            // 0.7 / 67 200 ≈ 1e-5 a frame; a skipped stretch of 100 frames would jump 1e-3.
            let inside = heard.isEmpty ? [] : Array(audio[(first + 100)...(last - 100)])
            let jump = zip(inside, inside.dropFirst()).map { abs($1 - $0) }.max() ?? 1
            print("AQPlayer 44.1 kHz, \(packets)-frame buffers, period \(period): heard \(heard.count) frames "
                  + "(span \(span)) of \(expected) (\(fileFrames) file frames); largest step \(jump); xruns \(xruns)")
            #expect(abs(heard.count - expected) <= 3, "heard \(heard.count) of \(expected) frames")
            #expect(span == heard.count, "\(span - heard.count) silent frames inside the sound")
            #expect(jump < 5e-5, "a jump of \(jump): audio skipped")
        }

        /// Plays a 44.1 kHz mono cosine (441 Hz, 0.5, from a peak to a peak) encoded by ffmpeg as
        /// `codec` through AQPlayer with buffers of `packets` packets (descriptions, cookie, the
        /// packet table's trims) on a 48 kHz server, and checks from the capture that every valid
        /// frame is heard, once: the sound lasts the file's valid frames at 48 kHz, and no silence
        /// longer than the cosine's zero crossings lies inside it.
        func playCompressedAndCheck(_ name: String, codec: [String], packets: Int) throws {
            try retryingOnXruns("AQDataLossTests") { try playCompressedAndCheck(name, codec: codec, packets: packets, $0) }
        }

        func playCompressedAndCheck(_ name: String, codec: [String], packets: Int, _ xrun: XrunFlag) throws {
            let fileFrames = 61_701                                   // 1.4 s; frame 61 700 is a peak
            let cosine = (0..<fileFrames).map { Float(0.5 * cos(2 * Double.pi * 441 * Double($0) / 44100)) }
            let source = temp.file("cosine-\(name).wav")
            try writeFile(source, cosine, rate: 44100, channels: 1, format: .float32)
            let path = temp.file("cosine.\(name)")
            let made = try CLI.run(["-hide_banner", "-loglevel", "error", "-y", "-i", source] + codec + [path],
                                   timeout: 60, executable: "/usr/bin/ffmpeg")
            try #require(made.status == 0, "ffmpeg: \(made.stderr)")
            let (result, audio, xruns) = try playThroughJACK(path, packets: packets, period: 256)
            xrun.set(xruns > 0)
            #expect(result.stdout.contains("played \(fileFrames) frames"), "\(result.stdout)")
            // A threshold of 0.1 (a fifth of the peaks at both ends) leaves out the converter's
            // ringing past the edges and, inside, at most 8 frames around each zero crossing.
            let expected = Int((Double(fileFrames) * Self.ratio).rounded())      // 139 158
            let loud = audio.indices.filter { abs(audio[$0]) > 0.1 }
            let first = loud.first ?? 0, last = loud.last ?? 0
            let span = loud.isEmpty ? 0 : last - first + 1
            let longestQuiet = zip(loud, loud.dropFirst()).map { $1 - $0 - 1 }.max() ?? 0
            print("AQPlayer \(name), \(packets)-packet buffers at 44.1 kHz on 48 kHz: sound spans \(span) frames of \(expected) "
                  + "(\(fileFrames) valid file frames); longest quiet stretch inside \(longestQuiet) frames; xruns \(xruns)")
            #expect(abs(span - expected) <= 3, "the sound spans \(span) frames, \(expected) expected")
            #expect(longestQuiet <= 12, "\(longestQuiet) quiet frames inside the sound: audio missing (xruns: \(xruns))")
        }

        @Test("a file player with buffers of 2 MP3 packets at 44.1 kHz on a 48 kHz server plays every valid frame")
        func playerMP3() throws { try playCompressedAndCheck("mp3", codec: ["-c:a", "libmp3lame", "-b:a", "160k"], packets: 2) }

        @Test("a file player with buffers of 2 AAC packets (M4A) at 44.1 kHz on a 48 kHz server plays every valid frame")
        func playerAAC() throws { try playCompressedAndCheck("m4a", codec: ["-c:a", "aac", "-b:a", "128k"], packets: 2) }

        @Test("a file player with 100-frame buffers at 44.1 kHz on a 48 kHz server plays every frame (period 256)")
        func player100Frames() throws { try playAndCheck(packets: 100, period: 256) }

        @Test("a file player with 100-frame buffers at 44.1 kHz on a 48 kHz server plays every frame (period 1024)")
        func player100FramesLongPeriod() throws { try playAndCheck(packets: 100, period: 1024) }
    }
}

extension AQCompatTests {
    /// Recording at 44.1 kHz from a 48 kHz offline device, deterministically: the exact frame
    /// counts of the conversion, buffers filled as soon as they are enqueued, and what a new run
    /// must drop reported.
    @Suite("Input conversion, offline", .serialized)
    struct InputConversionTests {
        /// Little-endian float32 samples of an input's bytes.
        static func floats(_ bytes: [UInt8]) -> [Float] {
            stride(from: 0, to: bytes.count, by: 4).map {
                Float(bitPattern: UInt32(bytes[$0]) | UInt32(bytes[$0 + 1]) << 8 | UInt32(bytes[$0 + 2]) << 16 | UInt32(bytes[$0 + 3]) << 24)
            }
        }

        /// The device's input: a ramp whose frame t holds t / 2¹⁶ (device sample time).
        static let ramp: OfflineDevice.InputProvider = { time, frames, channels in
            for i in 0..<frames { channels[0][i] = Float(time + Int64(i)) / 65536 }
        }

        @Test("one second at 48 kHz records 44 100 frames at 44.1 kHz into 100-frame buffers, every one on the ramp")
        func exactLength() throws {
            let (device, queue, log) = try startedOfflineInputQueue(
                rate: 48000, channels: 1, maximumFrames: 480, format: pcm(44100, channels: 1, bits: 32, float: true),
                bufferFrames: 100, provider: Self.ramp)
            defer { AudioQueueSetDefaultDevice(.standard) }
            for _ in 0..<100 { _ = try device.renderFloat(frames: 480) }     // device frames 0 ..< 48 000
            #expect(AudioQueueStop(queue, true) == noErr)                   // stops at 48 000
            _ = try device.renderFloat(frames: 480)
            #expect(AudioQueueDispose(queue, true) == noErr)
            let inputs = log.inputs
            var time = 0.0
            for input in inputs {
                #expect(input.sampleTime == time)
                time += Double(input.packets)
            }
            // 48 000 device frames are 44 100 queue frames: the converter is latency-compensated
            // (its delay is taken off the front, its tail flushed at the stop), so not a frame more
            // or less.
            #expect(time == 44100, "converted frames: \(time)")
            #expect(inputs.dropLast().allSatisfy { $0.packets == 100 })
            // Frame k holds the ramp at device time k × 48/44.1, past the filter's edges (it rings
            // before the cut at the stop).
            let samples = inputs.flatMap { Self.floats($0.bytes) }
            let off = (64..<(samples.count - 128)).filter { abs(Double(samples[$0]) * 65536 - Double($0) * 48000 / 44100) > 0.05 }
            #expect(off.isEmpty, "\(off.count) frames off the ramp, first at \(off.first ?? -1)")
        }

        @Test("a buffer enqueued late is filled from what was recorded meanwhile, at once and in order")
        func lateEnqueue() throws {
            let (device, queue, log) = try startedOfflineInputQueue(
                rate: 48000, channels: 1, maximumFrames: 480, format: pcm(44100, channels: 1, bits: 32, float: true),
                bufferFrames: 441, provider: Self.ramp)
            defer { AudioQueueSetDefaultDevice(.standard) }
            log.reenqueue = false
            for _ in 0..<50 { _ = try device.renderFloat(frames: 480) }      // 0.5 s; only 3 × 10 ms taken
            #expect(log.inputs.count == 3)
            // Three more buffers: the next render fills each from the backlog, in order.
            var refs: [AudioQueueBufferRef] = []
            for _ in 0..<3 {
                var buffer: AudioQueueBufferRef?
                #expect(AudioQueueAllocateBuffer(queue, 441 * 4, &buffer) == noErr)
                refs.append(buffer!)
            }
            for ref in refs { #expect(AudioQueueEnqueueBuffer(queue, ref, 0, nil) == noErr) }
            _ = try device.renderFloat(frames: 480)
            let inputs = log.inputs
            #expect(inputs.count == 6)
            #expect(inputs.map(\.sampleTime) == [0, 441, 882, 1323, 1764, 2205])
            let samples = inputs.flatMap { Self.floats($0.bytes) }
            let off = (64..<samples.count).filter { abs(Double(samples[$0]) * 65536 - Double($0) * 48000 / 44100) > 0.05 }
            #expect(off.isEmpty, "\(off.count) frames off the ramp, first at \(off.first ?? -1)")
            #expect(AudioQueueStop(queue, true) == noErr)
            _ = try device.renderFloat(frames: 480)
            #expect(AudioQueueDispose(queue, true) == noErr)
        }

        @Test("what no buffer took before a new run is dropped at the start and reported as an overflow")
        func leftoverReported() throws {
            let (device, queue, log) = try startedOfflineInputQueue(
                rate: 48000, channels: 1, maximumFrames: 480, format: pcm(44100, channels: 1, bits: 32, float: true),
                bufferFrames: 441, provider: Self.ramp)
            defer { AudioQueueSetDefaultDevice(.standard) }
            log.reenqueue = false
            for _ in 0..<50 { _ = try device.renderFloat(frames: 480) }      // 24 000 device frames
            #expect(AudioQueueStop(queue, true) == noErr)
            _ = try device.renderFloat(frames: 480)
            #expect(log.inputs.count == 3)                                 // 1 323 of 22 050 frames taken
            let engine = try AudioQueueCompatDefaultEngine()
            #expect(!engine.discontinuities.contains { $0.kind == .overflow })
            #expect(AudioQueueStart(queue, nil) == noErr)
            let overflows = engine.discontinuities.filter { $0.kind == .overflow }
            #expect(overflows.count == 1)
            // 22 050 − 1 323 queue frames, in device frames.
            if let overflow = overflows.first {
                let expectedLength: Double = Double(22050 - 1323) * 48000 / 44100
                let expectedTime: Double = 1323.0 * 48000 / 44100
                #expect(abs(Double(overflow.length) - expectedLength) <= 2, "\(overflow)")
                #expect(abs(Double(overflow.sampleTime) - expectedTime) <= 2, "\(overflow)")
            }
            #expect(AudioQueueStop(queue, true) == noErr)
            _ = try device.renderFloat(frames: 480)
            #expect(AudioQueueDispose(queue, true) == noErr)
        }
    }
}
