import AudioQueueCompat
import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import LockstepTestSupport
import Testing

/// Runs a built example (`Examples/…`) as a process.
func runExample(_ name: String, _ arguments: [String], timeout: Double = 30) throws -> CLI.Result {
    let path = CLI.executable(named: name)
    #expect(FileManager.default.isExecutableFile(atPath: path), "build the examples first: \(path)")
    return try CLI.run(arguments, timeout: timeout, executable: path)
}

/// Every sample of a file as libsndfile's exact 32-bit integers (full scale ±2³¹).
func integerSamples(_ path: String) throws -> (StreamFormat, [Int32]) {
    let reader = try AudioFileReader(path: path)
    var samples = [Int32](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
    let frames = try samples.withUnsafeMutableBufferPointer { try reader.read(int32Samples: $0.baseAddress!, frames: Int(reader.frameCount)) }
    #expect(frames == Int(reader.frameCount))
    return (reader.format, samples)
}

/// Every sample of a file as floats.
func floatSamples(_ path: String) throws -> (StreamFormat, [Float]) {
    let reader = try AudioFileReader(path: path)
    var samples = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
    _ = try samples.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
    return (reader.format, samples)
}

func writeFile(_ path: String, _ samples: [Float], rate: Double = 48000, channels: Int = 2, format: SampleFormat) throws {
    let writer = try AudioFileWriter(path: path, format: StreamFormat(sampleRate: rate, channelCount: channels, sampleFormat: format))
    try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: samples.count / channels) }
    try writer.close()
}

extension AQCompatTests {
    /// The seed ports in `Examples/`, run as processes, their output checked to the sample.
    @Suite("Examples, offline", .serialized)
    struct ExampleTests {
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-examples") }

        @Test("AQPlayer renders a file offline through its queue, sample-exactly", arguments: [
            ("in.aiff", SampleFormat.int16, "out.wav"), ("in.caf", .int24, "out.aiff"), ("in.wav", .float32, "out.caf"),
        ])
        func player(input: String, sampleFormat: SampleFormat, output: String) throws {
            let frames = 70_001
            let samples = (0..<(frames * 2)).map { (i: Int) -> Float in Float((i * 7919) % 20_000 - 10_000) / 32768 }
            try writeFile(temp.file(input), samples, rate: 44100, format: sampleFormat)
            let result = try runExample("AQPlayer", [temp.file(input), "--offline", temp.file(output)])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("rendered \(frames) frames"))
            let (inFormat, expected) = try integerSamples(temp.file(input))
            let (outFormat, rendered) = try integerSamples(temp.file(output))
            #expect(outFormat == inFormat)
            #expect(rendered == expected)
        }

        @Test("AQPlayer plays MP3, AAC and ALAC offline: buffers of packets with descriptions, the cookie, the packet table's trims — every valid frame, exactly", arguments: [
            ("mp3", 3), ("m4a", 2), ("alac", 1),
        ])
        func compressedPlayer(kind: String, packets: Int) throws {
            let fixtures = CompressedFixtures.shared
            let input = kind == "mp3" ? try fixtures.mp3 : kind == "m4a" ? try fixtures.m4a : try fixtures.alacM4A
            let output = temp.file("\(kind).wav")
            let result = try runExample("AQPlayer", [input, "--offline", output, "--packets", String(packets)])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("rendered \(CompressedFixtures.frames) frames"), "\(result.stdout)")
            let (status, bytes) = try extReadAll(output, client: floatClient44)
            #expect(status == noErr)
            expectMatchesSource(floats(bytes), lossless: kind == "alac")
        }

        @Test("AQOfflineRender runs Apple's loop (one buffer; it stops once the callback has flushed at the end of the file): every frame of a WAV comes out, and of an ALAC file every packet, the source exactly", arguments: [
            "wav", "alac-caf", "alac-m4a",
        ])
        func offlineRenderEveryFrame(source kind: String) throws {
            let fixtures = CompressedFixtures.shared
            let source = kind == "wav" ? fixtures.directory.file("source.wav") : kind == "alac-caf" ? try fixtures.alacCAF : try fixtures.alacM4A
            let path = temp.file("every-\(kind).wav")
            let result = try runExample("AQOfflineRender", [source, path, "--file-format", "float32"])
            #expect(result.status == 0, "\(result.stderr)")
            let (status, bytes) = try extReadAll(path, client: floatClient44)
            #expect(status == noErr)
            var decoded = floats(bytes)
            if kind != "wav" {
                // Apple's loop plays whole packets: the last one's padding (silence) comes out too.
                let frames = decoded.count / CompressedFixtures.channels
                #expect(frames % 4096 == 0 && frames - CompressedFixtures.frames < 4096, "\(frames) frames")
                #expect(decoded[(CompressedFixtures.frames * CompressedFixtures.channels)...].allSatisfy { $0 == 0 })
                decoded = Array(decoded.prefix(CompressedFixtures.frames * CompressedFixtures.channels))
            }
            expectMatchesSource(decoded, lossless: true)
        }

        @Test("AQOfflineRender captures through ExtAudioFile into ALAC (CAF, M4A) and AAC (M4A): every frame, ALAC exactly", arguments: [
            ("alac", "out-alac.caf"), ("alac", "out-alac.m4a"), ("aac", "out-aac.m4a"),
        ])
        func offlineRenderCompressed(codec: String, output: String) throws {
            let fixtures = CompressedFixtures.shared
            let source = fixtures.directory.file("source.wav")
            let path = temp.file(output)
            let result = try runExample("AQOfflineRender", [source, path, "--file-format", codec])
            #expect(result.status == 0, "\(result.stderr)")
            let facts = try readCompressed(path)
            #expect(facts.format.mFormatID == (codec == "alac" ? kAudioFormatAppleLossless : kAudioFormatMPEG4AAC))
            #expect(facts.table.mNumberValidFrames == Int64(CompressedFixtures.frames))
            let (status, bytes) = try extReadAll(path, client: floatClient44)
            #expect(status == noErr)
            expectMatchesSource(floats(bytes), lossless: codec == "alac")
            // ffprobe, independent of Lockstep, reads the file and its packets.
            #expect(try CompressedFixtures.probePacketSizes(path) == facts.packets.map(\.count))
        }

        @Test("AQVoiceMeter records the offline sine exactly to big-endian AIFF and meters it")
        func voiceMeter() throws {
            let path = temp.file("voice.aiff")
            let result = try runExample("AQVoiceMeter", [path, "--sine", "441", "--seconds", "1"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("recorded 44100 packets"))
            let levels = result.stdout.split(separator: "\n").filter { $0.hasPrefix("level") }
            #expect(levels.count == 10)
            for line in levels {
                let fields = line.split(separator: " ").compactMap { $0.split(separator: "=").last.flatMap { Double($0) } }
                #expect(fields.count == 2 && abs(fields[0] - -6.02) < 0.02 && abs(fields[1] - -9.03) < 0.05, "\(line)")
            }
            let reader = try AudioFileReader(path: path)
            #expect(reader.fileType == .aiff && reader.format.sampleFormat == .int16 && reader.frameCount == 44100)
            let (_, recorded) = try integerSamples(path)
            let sine = (0..<44100).map { Float(0.5 * sin(2 * Double.pi * 441 * Double($0) / 44100)) }
            var expected = [Int16](repeating: 0, count: 44100)
            sine.withUnsafeBufferPointer { source in
                expected.withUnsafeMutableBytes { PCMCodec.encode(source.baseAddress!, sampleCount: 44100, format: .int16, into: $0.baseAddress!) }
            }
            #expect(recorded.map { Int16($0 >> 16) } == expected)
        }

        @Test("AQSimultaneous: three sounds in three formats start on one sample of the offline mix")
        func simultaneousOffline() throws {
            let files = [("a.wav", SampleFormat.float32, Float(0.25)), ("b.aiff", .int16, 0.125), ("c.caf", .int24, 0.0625)]
            for (name, format, value) in files {
                try writeFile(temp.file(name), Signals.impulse(at: 0, frames: 4800, value: value, channels: 2), format: format)
            }
            let result = try runExample("AQSimultaneous", files.map { temp.file($0.0) } + ["--offline", temp.file("mix.wav"), "--at", "480"])
            #expect(result.status == 0, "\(result.stderr)")
            let (format, mix) = try floatSamples(temp.file("mix.wav"))
            #expect(format.channelCount == 2 && format.sampleRate == 48000)
            let nonzero = mix.indices.filter { mix[$0] != 0 }
            #expect(nonzero == [960, 961])                     // frame 480, both channels
            #expect(mix[960] == 0.4375 && mix[961] == 0.4375)
            #expect(mix.count / 2 >= 480 + 4800)
        }
    }

    @Test("without a JACK server the default device cannot be opened: kAudioQueueErr_InvalidDevice")
    func noServer() throws {
        let temp = try TemporaryTestDirectory(prefix: "aqcompat-noserver")
        try writeFile(temp.file("tone.wav"), Signals.constant(0.25, frames: 480), channels: 1, format: .int16)
        let result = try runExample("AQPlayer", [temp.file("tone.wav"), "--server", "lockstep-no-such-server-\(getpid())"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("AudioQueueStart failed") && result.stderr.contains("(-66680)"), "\(result.stderr)")
    }
}

extension JACKTests {
    /// The Audio Queue examples against a private dummy-driver jackd (in the JACK parent suite:
    /// the test process opens JACK clients).
    @Suite("Audio Queue examples on JACK", .serialized)
    struct AQExampleJACKTests {
        let temp: TemporaryTestDirectory
        init() throws { temp = try TemporaryTestDirectory(prefix: "aqcompat-jack") }

        /// Runs AQRecorder for a second, 24-bit, on a new server, recording a ramp (one step of 2⁻²³
        /// a frame) on both inputs; returns what it printed and the file's format and samples, and
        /// sets `xrun` when the ramp's client saw the server xrun (a cycle the server skipped: the
        /// recorder keeps the timeline by recording those frames as silence, while the ramp, a
        /// counter, goes on where it was).
        func recordRamp(_ name: String, _ arguments: [String], _ xrun: XrunFlag) throws -> (CLI.Result, StreamFormat, [Int32]) {
            let server = try JACKServer()
            let ramp = try JACKRampSource(server: server, channels: 1, signal: .ramp(start: 1, step: 1.0 / 8_388_608))
            try ramp.start()
            defer { ramp.stop() }
            let path = temp.file(name)
            try? FileManager.default.removeItem(atPath: path)       // a rerun's take replaces the last one
            let result = try runExample("AQRecorder", [path, "--seconds", "1", "--server", server.name, "--bits", "24",
                                                       "--connect", ramp.portNames[0], "--connect", ramp.portNames[0]] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            let (format, samples) = name.hasSuffix(".aiff") ? try integerSamples(path) : try decodedIntegerSamples(path)
            xrun.set(ramp.xrunCount > 0)
            return (result, format, samples)
        }

        /// A compressed file decoded by ExtAudioFile (its valid frames) as 32-bit integers (full
        /// scale ±2³¹, as ``integerSamples(_:)`` reads); the format is the file's rate and channels.
        func decodedIntegerSamples(_ path: String) throws -> (StreamFormat, [Int32]) {
            var file: ExtAudioFileRef?
            try #require(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file) == noErr)
            var fileFormat = AudioStreamBasicDescription()
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            #expect(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_FileDataFormat, &size, &fileFormat) == noErr)
            #expect(ExtAudioFileDispose(file!) == noErr)
            var client = floatClient44
            client.mSampleRate = fileFormat.mSampleRate
            let (status, bytes) = try extReadAll(path, client: client)
            #expect(status == noErr)
            let samples = floats(bytes).map { Int32(clamping: Int64((Double($0) * 2_147_483_648).rounded())) }
            return (StreamFormat(sampleRate: fileFormat.mSampleRate, channelCount: Int(fileFormat.mChannelsPerFrame), sampleFormat: .float32), samples)
        }

        /// Checks a recorded 24-bit ramp (both channels the same): every frame the ramp played is
        /// recorded once, in order, from its first to the stop, in the packets the recorder wrote.
        func expectRamp(_ result: CLI.Result, _ samples: [Int32], framesPerPacket: Int = 1) throws {
            let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] >> 8 }
            let right = stride(from: 1, to: samples.count, by: 2).map { samples[$0] >> 8 }
            #expect(left == right)
            let packets = (left.count + framesPerPacket - 1) / framesPerPacket
            #expect(left.count > 40_000 && result.stdout.contains("recorded \(packets) packets"), "\(left.count) frames; \(result.stdout)")
            let first = try #require(left.firstIndex { $0 != 0 })
            #expect(left.count - first > 20_000)
            // Every frame the ramp played is recorded once, in order, with no silence inside.
            let sound = left[first...].filter { $0 != 0 }
            let gaps = zip(sound, sound.dropFirst()).filter { $1 != $0 + 1 }.count
            #expect(gaps == 0, "the recorded ramp must count up by exactly one every frame")
            let silences = zip(left[first...], left[(first + 1)...]).filter { $0 != 0 && $1 == 0 }.count
            #expect(silences == 0, "\(silences) runs of silence in the take")
        }

        @Test("AQRecorder records a JACK ramp into big-endian 24-bit AIFF without losing or repeating a frame")
        func recorder() throws {
            try retryingOnXruns("AQExampleJACKTests") { xrun in
                let (result, format, samples) = try recordRamp("take.aiff", ["--rate", "48000"], xrun)
                #expect(format.sampleFormat == .int24 && format.channelCount == 2 && format.sampleRate == 48000)
                try expectRamp(result, samples)
            }
        }

        @Test("AQRecorder --format alac records a JACK ramp into 24-bit ALAC (CAF) through the queue's encoder, every frame once; ffmpeg reads the same length")
        func recorderALAC() throws { try retryingOnXruns("AQExampleJACKTests", recorderALACRun) }

        func recorderALACRun(_ xrun: XrunFlag) throws {
            let (result, format, samples) = try recordRamp("take.caf", ["--rate", "48000", "--format", "alac"], xrun)
            #expect(format.channelCount == 2 && format.sampleRate == 48000)
            try expectRamp(result, samples, framesPerPacket: 4096)
            let frames = samples.count / 2
            let packets = (frames + 4095) / 4096
            let probe = try CLI.run(["-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", temp.file("take.caf")],
                                    timeout: 30, executable: "/usr/bin/ffprobe")
            #expect(Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == packets)
            let decoded = try CLI.run(["-hide_banner", "-loglevel", "error", "-y", "-i", temp.file("take.caf"), "-f", "s32le", temp.file("take.s32")],
                                      timeout: 30, executable: "/usr/bin/ffmpeg")
            #expect(decoded.status == 0)
            let theirs = (try? Data(contentsOf: URL(fileURLWithPath: temp.file("take.s32"))).count) ?? 0
            #expect(theirs == frames * 2 * 4, "ffmpeg decodes \(theirs / 8) frames, the packet table says \(frames)")
        }

        @Test("AQRecorder --format aac records 44.1 kHz AAC (M4A) from a 48 kHz server: the packet table's frames are the edit list's ffprobe reads")
        func recorderAAC() throws {
            let (result, format, samples) = try recordRamp("take.m4a", ["--format", "aac"], XrunFlag())
            #expect(format.channelCount == 2 && format.sampleRate == 44100)
            let frames = samples.count / 2
            #expect(frames > 40_000 && frames < 60_000, "\(frames) frames in a 1 s take; \(result.stdout)")
            #expect(try CompressedFixtures.probeDuration(temp.file("take.m4a")) == frames)
            #expect(result.stdout.contains("packets (aac"))
        }

        @Test("AQRecorder at the listing's 44.1 kHz on a 48 kHz server records the ramp converted, smoothly")
        func recorderConverted() throws { try retryingOnXruns("AQExampleJACKTests", recorderConvertedRun) }

        func recorderConvertedRun(_ xrun: XrunFlag) throws {
            let (result, format, samples) = try recordRamp("take-44k.aiff", [], xrun)
            #expect(result.stdout.contains("44100 Hz"))
            #expect(format.sampleRate == 44100 && format.sampleFormat == .int24)
            let left = stride(from: 0, to: samples.count, by: 2).map { Int64(samples[$0] >> 8) }
            #expect(left.count > 36_000 && left.count < 60_000, "\(left.count) frames; \(result.stdout)")
            let first = try #require(left.firstIndex { $0 != 0 })
            // 48000 ramp steps a second resampled to 44100 frames: each frame climbs 48/44.1 steps,
            // so once the converter has settled every difference is 1 or 2 (nothing lost or doubled).
            let settled = Array(left[(first + 200)..<(left.count - 200)])
            let steps = zip(settled, settled.dropFirst()).map { $1 - $0 }
            #expect(!steps.isEmpty)
            let odd = steps.indices.filter { steps[$0] != 1 && steps[$0] != 2 }
            var clusters: [ClosedRange<Int>] = []
            for index in odd {
                if let last = clusters.last, index - last.upperBound <= 400 {
                    clusters[clusters.count - 1] = last.lowerBound...index
                } else {
                    clusters.append(index...index)
                }
            }
            #expect(clusters.isEmpty, "steps other than 1 or 2 at \(clusters)")
            // The rate, over the longest stretch between such places.
            var bounds = [0] + clusters.flatMap { [max(0, $0.lowerBound - 200), min(settled.count - 1, $0.upperBound + 200)] }
            bounds.append(settled.count - 1)
            let stretches = stride(from: 0, to: bounds.count - 1, by: 2).map { bounds[$0]...bounds[$0 + 1] }
            let longest = try #require(stretches.max { $0.count < $1.count })
            #expect(longest.count > 20_000)
            let mean = Double(settled[longest.upperBound] - settled[longest.lowerBound]) / Double(longest.count - 1)
            #expect(abs(mean - 48000.0 / 44100.0) < 0.001)
        }

        @Test("AQSimultaneous plays three sounds whose first frames land on one JACK frame")
        func simultaneousLive() throws {
            let server = try JACKServer()
            let files = [("a.wav", SampleFormat.float32, Float(0.25)), ("b.aiff", .int16, 0.125), ("c.caf", .int24, 0.0625)]
            for (name, format, value) in files {
                try writeFile(temp.file(name), Signals.impulse(at: 0, frames: 4800, value: value, channels: 2), format: format)
            }
            let path = CLI.executable(named: "AQSimultaneous")
            let process = try CLI.spawn(files.map { temp.file($0.0) } + ["--server", server.name, "--lead", "48000"], executable: path)
            try server.waitForPort("AQSimultaneous:out_1")
            // The ports exist a moment before the client is active and can be connected.
            var attempt: JACKCapture?
            for _ in 0..<50 where attempt == nil {
                let capture = try JACKCapture(server: server, sources: ["AQSimultaneous:out_1", "AQSimultaneous:out_2"], maxSeconds: 6)
                do { try capture.start(); attempt = capture } catch { capture.stop(); usleep(20_000) }
            }
            let capture = try #require(attempt)
            let result = process.wait(timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("played 3 sounds"))
            for channel in 0..<2 {
                let audio = capture.channel(channel)
                let nonzero = audio.indices.filter { audio[$0] != 0 }
                #expect(nonzero.count == 1, "one frame holds all three impulses")
                if let frame = nonzero.first { #expect(audio[frame] == 0.4375) }
            }
            capture.stop()
        }

        @Test("AQPlayer plays live through JACK until the is-running listener says it stopped")
        func playerLive() throws {
            let server = try JACKServer()
            try writeFile(temp.file("tone.wav"), Signals.sine(frequency: 440, sampleRate: 48000, frames: 12_000, amplitude: 0.5),
                          channels: 1, format: .int16)
            let start = Date()
            let result = try runExample("AQPlayer", [temp.file("tone.wav"), "--server", server.name])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("played 12000 packets"))
            #expect(Date().timeIntervalSince(start) >= 0.2)        // 0.25 s of audio really played
        }
    }
}
