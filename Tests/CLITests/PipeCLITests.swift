import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// `-` as a file, with real `sox` on the other end of the pipe, and the errors of bad
/// combinations: one sentence each, naming the file or option, no raw library codes.
@Suite("lockstep CLI: pipes and translated errors")
struct PipeCLITests {
    let temp: TemporaryTestDirectory
    var dir: String { temp.path }

    init() throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-pipes")
    }

    /// Runs `script` with bash (pipefail off), in the test directory; `$L` is the lockstep binary.
    /// The status is lockstep's own when the script ends with `exit ${PIPESTATUS[i]}`.
    func shell(_ script: String) throws -> CLI.Result {
        try CLI.run(["-c", "L='\(CLI.binary)'; cd '\(dir)'; " + script], executable: "/bin/bash")
    }

    /// A ramp file: sample n of channel c is (n + c) / 32768, exact in 16-bit and every wider type.
    func ramp(_ name: String, frames: Int, rate: Double = 48000, channels: Int = 2, sampleFormat: SampleFormat = .int16) throws -> [Float] {
        let samples = (0..<frames * channels).map { Float(($0 % channels + $0 / channels) % 32768) / 32768 }
        let writer = try AudioFileWriter(path: "\(dir)/\(name)", type: AudioFileType(path: name) ?? .wav,
                                         format: StreamFormat(sampleRate: rate, channelCount: channels, sampleFormat: sampleFormat))
        try samples.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: frames) }
        try writer.close()
        return samples
    }

    func read(_ path: String) throws -> (StreamFormat, [Float]) {
        let reader = try AudioFileReader(path: path, truncation: .reject)
        var out = [Float](repeating: 0, count: Int(reader.frameCount) * reader.format.channelCount)
        let got = try out.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: Int(reader.frameCount)) }
        return (reader.format, Array(out[..<(got * reader.format.channelCount)]))
    }

    @Test("render -o - writes WAV, AU and FLAC that sox reads back sample for sample; stdout holds only audio")
    func renderToSox() throws {
        let input = try ramp("in.wav", frames: 4800)
        for (format, soxType) in [("wav", "wav"), ("au", "au"), ("flac", "flac")] {
            let r = try shell("$L render in.wav -o - --format \(format) --sample-format s16 --verbose | sox -t \(soxType) - out-\(format).wav 2>sox.log; exit ${PIPESTATUS[0]}")
            #expect(r.status == 0, "\(format): \(r.stderr)")
            // The summary and the verbose details went to standard error, not into the pipe.
            #expect(r.stderr.contains("rendered 1 layer to -: 4800 frames"), "\(r.stderr)")
            #expect(r.stderr.contains("writing standard output"), "\(r.stderr)")
            let soxLog = try String(contentsOfFile: "\(dir)/sox.log", encoding: .utf8)
            #expect(!soxLog.contains("Premature EOF") && !soxLog.contains("FAIL"), "sox: \(soxLog)")
            let (shape, samples) = try read("\(dir)/out-\(format).wav")
            #expect(shape.sampleRate == 48000 && shape.channelCount == 2)
            #expect(samples == input, "\(format): sox read back other samples")
        }
    }

    @Test("the lossy types stream too: sox or lockstep reads Ogg Vorbis, Opus and MP3 from the pipe")
    func lossyToPipe() throws {
        _ = try ramp("in.wav", frames: 48000)
        for format in ["ogg", "opus", "mp3"] {
            let r = try shell("$L render in.wav -o - --format \(format) | $L info --json -; exit ${PIPESTATUS[0]}")
            #expect(r.status == 0, "\(format): \(r.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            #expect(object?["frames"] as? Int == 48000, "\(format): \(r.stdout) \(r.stderr)")
        }
    }

    @Test("sox into lockstep: render -, info - and session check - read standard input; sox's unspecified WAV length is no truncation")
    func soxIntoLockstep() throws {
        var r = try shell("sox -n -r 44100 -c 1 -b 16 -t wav - synth 0.5 sine 440 2>/dev/null | $L render - -o out.flac")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "a sox stream is not truncated: \(r.stderr)")
        let (format, samples) = try read("\(dir)/out.flac")
        #expect(format.sampleRate == 48000 && samples.count == 24000 * 2)
        r = try shell("sox -n -r 22050 -c 2 -t wav - synth 1 sine 300 2>/dev/null | $L info -")
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("-: ") && r.stdout.contains("22050 Hz, 2 ch, 22050 frames"), "\(r.stdout)")
        _ = try ramp("bed.wav", frames: 4800)
        r = try shell("printf 'rate: 48000\\ncues:\\n  - file: bed.wav\\n' | $L session check -")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("1 cues on 1 layers at 48000 Hz"), "\(r.stdout)")
    }

    /// A WAV stream as sox writes one into a pipe (its header's length "unknown"): `seconds` of
    /// a 16-bit stereo 48 kHz sine.
    func soxStream(seconds: Int) throws -> Data {
        // Through `cat`, so sox cannot seek back: its header says "length unknown", as in a pipe.
        let r = try shell("sox -D -n -r 48000 -c 2 -b 16 -t wav - synth \(seconds) sine 440 gain -6 2>/dev/null | cat > stream.wav")
        #expect(r.status == 0, "\(r.stderr)")
        return try Data(contentsOf: URL(fileURLWithPath: "\(dir)/stream.wav"))
    }

    @Test("render - -o - streams: output comes out while the input pipe is still open, and nothing is spooled to disk")
    func renderStreamsWhileInputIsOpen() throws {
        let stream = try soxStream(seconds: 2)
        let spool = try TemporaryTestDirectory(prefix: "lockstep-tmpdir")
        let running = try CLI.spawn(["render", "-", "-o", "-", "--format", "wav", "--sample-format", "s16"],
                                    environment: ["TMPDIR": spool.path], in: dir, withInput: true)
        // Two seconds in; the pipe stays open.
        running.send(data: stream)
        let started = Date()
        var flowing = false
        while Date().timeIntervalSince(started) < 20 && running.isRunning {
            // Two 64 KiB chunks of audio past the header (the player reads about 1 s ahead).
            if running.outputByteCount > 131_116 { flowing = true; break }
            usleep(10_000)
        }
        #expect(flowing, "no output while the input is open: \(running.outputByteCount) bytes; \(running.errorOutputSoFar)")
        #expect(running.isRunning, "the render must still be waiting for the rest of its input")
        print("render - -o -: \(running.outputByteCount) bytes out \(String(format: "%.3f", Date().timeIntervalSince(started))) s after 2 s of input, pipe open")
        let spooled = try spool.contents()
        #expect(spooled.isEmpty, "nothing in TMPDIR: \(spooled)")
        // Then one more second of samples (the header said "length unknown"), and the end.
        running.send(data: Data(stream.suffix(192_000)))
        running.closeInput()
        let result = running.wait(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("rendered 1 layer to -: 144000 frames"), "\(result.stderr)")
        let out = running.outputDataSoFar
        try out.write(to: URL(fileURLWithPath: "\(dir)/out.wav"))
        let (format, samples) = try read("\(dir)/out.wav")
        #expect(format.channelCount == 2 && samples.count == 144_000 * 2)
        #expect(try spool.contents().isEmpty)
    }

    @Test("render - mixed with a file, its input trickling in: every cycle waits for the audio it needs, so the mix equals the render of the same files")
    func trickledInputMixesExactly() throws {
        // The files are decoded on a streaming thread while the main thread mixes: a layer whose
        // input comes slowly must hold the mix back, never leave a gap or a shifted buffer. (A
        // WAV whose header says "length unknown", as sox writes into a pipe, is read as it comes.)
        let stream = try soxStream(seconds: 3)
        _ = try ramp("bed.wav", frames: 48_000, channels: 1)
        var r = try shell("$L render stream.wav bed.wav -o reference.wav --gain -3")
        #expect(r.status == 0, "\(r.stderr)")
        let running = try CLI.spawn(["render", "-", "bed.wav", "-o", "trickled.wav", "--gain", "-3"], in: dir, withInput: true)
        // 576 KB in 24 KiB pieces, 40 ms apart: about a second for what the mix takes in milliseconds.
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + 24_576)
            running.send(data: stream.subdata(in: offset..<end))
            offset = end
            usleep(40_000)          // a wait for time: the input trickles in
        }
        running.closeInput()
        r = running.wait(timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("rendered 2 layers to trickled.wav: 144000 frames"), "\(r.stdout)")
        let (_, reference) = try read("\(dir)/reference.wav")
        let (_, trickled) = try read("\(dir)/trickled.wav")
        #expect(trickled.count == 144_000 * 2 && trickled == reference, "the trickled mix differs from the render of the files")
    }

    @Test("sox on both ends: a stream longer than the memory kept for headers passes through whole and exact")
    func longStreamThroughSox() throws {
        // 60 s of 48 kHz stereo 16-bit is 11 MB, more than the 4 MiB kept of a stream's start.
        // (-D: no dither, so both sox runs make the same samples.)
        let r = try shell("sox -D -n -r 48000 -c 2 -b 16 -t wav - synth 60 sine 440 gain -6 2>/dev/null | $L render - -o - --format flac --sample-format s16 | sox -t flac - -t raw - 2>/dev/null | md5sum; sox -D -n -r 48000 -c 2 -b 16 -t raw - synth 60 sine 440 gain -6 2>/dev/null | md5sum")
        #expect(r.status == 0, "\(r.stderr)")
        let sums = r.stdout.split(separator: "\n")
        #expect(sums.count == 2 && sums[0] == sums[1], "the stream came back changed: \(r.stdout) \(r.stderr)")
    }

    @Test("info - decodes a pipe as it arrives: length counted, codec and bitrate shown, for every format that can come through a pipe")
    func infoOnPipes() throws {
        let cases: [(String, String)] = [
            ("-t wav", "PCM s16"), ("-t au", "PCM s16"), ("-t flac", "FLAC s16"), ("-t aiff", "PCM s16"),
            ("-t wav -e u-law", "µ-law"), ("-t wav -e ima-adpcm", "IMA ADPCM"), ("-t ogg", "Vorbis"), ("-t mp3", "MP3"),
            ("-t w64", "PCM s16"), ("-t sph", "PCM s16"), ("-t paf", "PCM s16"),
        ]
        for (soxType, codec) in cases {
            let r = try shell("sox -n -r 48000 -c 2 -b 16 \(soxType) - synth 1 sine 440 gain -6 2>/dev/null | $L info -")
            #expect(r.status == 0, "\(soxType): \(r.stderr)")
            #expect(r.stdout.hasPrefix("-: ") && r.stdout.contains(", \(codec), 48000 Hz, 2 ch, "), "\(soxType): \(r.stdout)")
            #expect(r.stdout.contains(" kb/s"), "\(soxType): a bitrate: \(r.stdout)")
        }
        // A block codec's stream ends with the stream, not at the 2 GiB sox's header claims
        // (libsndfile pads a cut block with silence and goes on: 12 hours of it, before).
        for encoding in ["ima-adpcm", "ms-adpcm"] {
            let r = try shell("sox -n -r 48000 -c 2 -b 16 -t wav -e \(encoding) - synth 1 sine 440 gain -6 2>/dev/null | $L info --json -")
            let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            let frames = object?["frames"] as? Int ?? 0
            #expect(r.status == 0 && frames >= 48000 && frames <= 48000 + 1024, "\(encoding): \(frames) frames; \(r.stderr)")
        }
        // Lossless and PCM streams arrive whole: their frame count is exact.
        let r = try shell("sox -n -r 48000 -c 2 -b 16 -t flac - synth 1 sine 440 2>/dev/null | $L info --json -")
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(object?["frames"] as? Int == 48000 && object?["lengthExact"] as? Bool == true, "\(r.stdout)")
    }

    @Test("a format libsndfile must measure cannot come through a pipe: one error naming '-' and what to pipe instead")
    func unseekableInput() throws {
        // HTK takes its length from the file's size: it does not open from a pipe.
        // sox's CAF into a pipe leaves its data size open, which libsndfile resolves only from a
        // file's size.
        for source in ["sox -n -r 16000 -c 1 -b 16 -t htk - synth 180 sine 440", "sox -n -r 48000 -c 2 -b 16 -t caf - synth 60 sine 440"] {
            let r = try shell("\(source) 2>/dev/null | $L info -")
            #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1, "\(source): \(r.stderr)")
            #expect(r.stderr.hasPrefix("lockstep: info: -: standard input (a pipe) ")
                    && r.stderr.contains("write WAV, AU, FLAC or Ogg to the pipe"), "\(source): \(r.stderr)")
        }
        // The same HTK as a file reads.
        var r = try shell("sox -n -r 16000 -c 1 -b 16 big.htk synth 180 sine 440 2>/dev/null; $L info big.htk")
        #expect(r.status == 0 && r.stdout.contains("2880000 frames"), "\(r.stdout) \(r.stderr)")
        // ALAC in CAF, SDS, PAF and NIST stream past 4 MiB (libsndfile writes CAF's packet table first).
        _ = try shell("sox -n -r 48000 -c 2 -b 16 noise.wav synth 60 whitenoise gain -3 2>/dev/null")
        r = try shell("$L render noise.wav -o alac.caf --sample-format alac-16 >/dev/null && cat alac.caf | $L info -")
        #expect(r.status == 0 && r.stdout.contains("ALAC s16, 48000 Hz, 2 ch, 2880000 frames"), "\(r.stdout) \(r.stderr)")
    }

    @Test("standard input is read once: '-' twice is refused; a device on standard input is refused")
    func standardInputOnce() throws {
        _ = try ramp("a.wav", frames: 100)
        var r = try shell("$L render - - -o out.wav < a.wav")
        #expect(r.status == 64 && r.stderr == "lockstep: render: '-' (standard input) is given 2 times; standard input can be read once: give '-' for one file and name the others\n")
        r = try shell("$L info - < /dev/null")
        #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("standard input is a device"), "\(r.stderr)")
        r = try shell("$L render - -o out.wav < a.wav")
        #expect(r.status == 0, "a regular file on standard input is read in place: \(r.stderr)")
    }

    @Test("a type that cannot go through a pipe is refused before anything is read, naming the types that can")
    func unseekableTypes() throws {
        _ = try ramp("a.wav", frames: 100)
        for format in ["aiff", "w64", "rf64", "caf"] {
            let r = try shell("$L render a.wav -o - --format \(format) | wc -c; exit ${PIPESTATUS[0]}")
            #expect(r.status == 64, "\(format): \(r.stderr)")
            #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "nothing written for \(format)")
            #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("cannot be written to a pipe")
                    && r.stderr.contains("WAV, AU, raw, FLAC, Ogg Vorbis, Opus, MP3"), "\(r.stderr)")
        }
        // Standard output redirected to a file can seek: every type works there.
        let r = try shell("$L render a.wav -o - --format aiff > out.aiff")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try AudioFileReader(path: "\(dir)/out.aiff").frameCount == 100)
    }

    @Test("a reader that goes away is one clear error, and --json is refused with -o -")
    func brokenPipeAndJSON() throws {
        _ = try ramp("long.wav", frames: 480_000)
        var r = try shell("$L render long.wav -o - | head -c 100 > /dev/null; exit ${PIPESTATUS[0]}")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("the program reading standard output stopped reading"), "\(r.stderr)")
        r = try shell("printf 'rate: 48000\\ncues:\\n  - file: long.wav\\n' > s.yaml; $L session render s.yaml -o - --json | wc -c; exit ${PIPESTATUS[0]}")
        #expect(r.status == 64 && r.stderr.contains("--json prints on standard output"), "\(r.stderr)")
    }

    @Test("rates the converter cannot reach name the option and the rates that work, once, without result codes")
    func rateErrors() throws {
        _ = try ramp("a.wav", frames: 100)
        for rate in ["1", "7", "100"] {
            let r = try CLI.run(["render", "\(dir)/a.wav", "-o", "\(dir)/x.wav", "--rate", rate])
            #expect(r.status == 64)
            #expect(r.stderr == "lockstep: render: \(dir)/a.wav: its 48000 Hz cannot be converted to --rate \(rate) Hz (libsoxr converts between rates at most 256 times apart); give a rate from 188 to 768000 Hz\n")
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.wav"))
        }
        _ = try ramp("low.wav", frames: 100, rate: 2000)
        try "rate: 48000\ncues:\n  - file: low.wav\n".write(toFile: "\(dir)/s.yaml", atomically: true, encoding: .utf8)
        let r = try CLI.run(["session", "render", "\(dir)/s.yaml", "-o", "\(dir)/x.wav", "--rate", "768000"])
        #expect(r.status == 64 && r.stderr.hasPrefix("lockstep: session render: ") && r.stderr.contains("its 2000 Hz cannot be converted to --rate 768000 Hz"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
    }

    @Test("libsndfile's errors read as Lockstep's sentences: no 'Error :' prefix, no result codes, one line")
    func libsndfileErrors() throws {
        try "not audio at all".write(toFile: "\(dir)/text.wav", atomically: true, encoding: .utf8)
        let cases: [[String]] = [
            ["info", "\(dir)/text.wav"],
            ["render", "\(dir)/text.wav", "-o", "\(dir)/x.wav"],
            ["render", "\(dir)/text.wav", "-o", "\(dir)/x.flac", "--sample-format", "f32"],
            ["render", "\(dir)/text.wav", "-o", "\(dir)/x.opus", "--rate", "44100"],
        ]
        for arguments in cases {
            let r = try CLI.run(arguments)
            #expect(r.status != 0)
            #expect(r.stderr.split(separator: "\n").count == 1, "\(arguments): \(r.stderr)")
            for raw in ["Error :", "kAudio", "OSStatus", "1718449215", "Format not recognised."] {
                #expect(!r.stderr.contains(raw), "\(arguments): \(r.stderr)")
            }
        }
    }

    @Test("--quiet leaves errors only; --verbose and --quiet together are a usage error")
    func quietAndVerbose() throws {
        let path = "\(dir)/cut.wav"
        _ = try ramp("cut.wav", frames: 100)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: try handle.seekToEnd() - 1)
        try handle.close()
        var r = try CLI.run(["render", path, "-o", "\(dir)/x.wav"])
        #expect(r.status == 0 && r.stderr.contains(": warning: "), "\(r.stderr)")
        r = try CLI.run(["render", path, "-o", "\(dir)/x.wav", "--quiet"])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        r = try CLI.run(["info", path, "-v", "-q"])
        #expect(r.status == 64 && r.stderr.contains("--verbose and --quiet contradict each other"))
    }
}
