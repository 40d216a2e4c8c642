import Lockstep
import LockstepFiles

/// A cue's audio at the session's rate: its file region, looped as asked, rate-converted when the
/// file's rate differs, read sample by sample from any position of the cue.
///
/// Runs where its layer is computed (it reads files): a streamer's thread live, the rendering
/// thread offline; never on the realtime thread or the engine's callback thread of a live run.
final class CueSource {
    let cue: SessionTimeline.Cue
    let rate: Double
    private let reader: any AudioSource
    private let converter: SoxrRateConverter?
    /// The next cue sample ``read(into:frames:)`` produces.
    private(set) var position: Int64 = 0
    /// The next file frame to read, and how many passes remain after the current one.
    private var filePosition: Int64
    private var passesAfterThis: Int
    private var inputDone = false
    private var flushed = false
    private var input: [Float]
    private let chunk = 1024
    /// Frames read from the file ahead of ``readFile(into:maximum:)``'s callers, in blocks of
    /// `blockFrames`: a layer asks for a buffer (1024 frames) at a time, and one `read` of 8 KiB
    /// per buffer and cue cost `session render` more in system calls than in mixing. (Allocated
    /// at the first read: a cue opened ahead of its start holds none yet.)
    private var block: [Float] = []
    private let blockFrames = 8192
    private var blockCount = 0
    private var blockRead = 0
    /// The converter's last output (held frames and filter tail), served after the input ends.
    private var tail: [Float] = []
    private var tailCount = 0
    private var tailRead = 0
    /// Converted output frames still to drop after a seek (the warm-up before the target).
    private var discard = 0
    /// The first error met while reading (the rest of the cue plays as silence).
    private(set) var error: FileError?

    init(cue: SessionTimeline.Cue, rate: Double, open: AudioSourceOpener) throws(FileError) {
        self.cue = cue
        self.rate = rate
        reader = try open(cue.path)
        if reader.format.sampleRate != rate {
            do {
                converter = try SoxrRateConverter(inputRate: reader.format.sampleRate, outputRate: rate,
                                                  channelCount: cue.fileChannels)
            } catch {
                throw FileError(.unsupportedFormat, path: cue.path, problem: "\(error)")
            }
        } else {
            converter = nil
        }
        filePosition = cue.regionStart
        passesAfterThis = (cue.playCount ?? 2) - 1
        input = Array(repeating: 0, count: chunk * cue.fileChannels)
        try reader.seek(toFrame: cue.regionStart)
    }

    deinit { reader.close() }

    /// Moves to sample `k` of the cue (at the session's rate).
    ///
    /// Same-rate cues land exactly. A converted cue restarts the converter a little earlier, on
    /// an input frame whose output falls on a whole session sample, and discards the output
    /// before `k`: the filter is warmed up on the same input as an uninterrupted play, so the
    /// samples match it to within rounding (no warm-up transient, no fractional shift).
    func seek(to k: Int64) {
        let region = cue.regionEnd - cue.regionStart
        var streamFrame = k
        discard = 0
        if let converter {
            let g = Self.gcd(Int64(rate.rounded()), Int64(cue.fileRate.rounded()))
            let inStep = max(1, Int64(cue.fileRate.rounded()) / g)
            let outStep = max(1, Int64(rate.rounded()) / g)
            let target = Int64((Double(k) * cue.fileRate / rate).rounded(.down))
            let preroll = Int64(converter.maximumLatencyFrames * 2 + 512)
            let first = max(0, target - preroll) / inStep * inStep
            streamFrame = first
            discard = Int(k - first / inStep * outStep)
        }
        let pass = streamFrame / region
        if let count = cue.playCount {
            passesAfterThis = count - 1 - Int(pass)
        }
        filePosition = cue.regionStart + streamFrame % region
        inputDone = cue.playCount.map { Int(pass) >= $0 } ?? false
        flushed = false
        converter?.reset()
        position = k
        blockCount = 0
        blockRead = 0
        do throws(FileError) { try reader.seek(toFrame: filePosition) } catch { self.error = self.error ?? error }
    }

    private static func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? max(1, a) : gcd(b, a % b) }

    /// Writes the next `frames` cue samples (interleaved, the file's channels) to `out`; past the
    /// cue's end, or after an error, it writes silence.
    func read(into out: UnsafeMutablePointer<Float>, frames: Int) {
        while discard > 0 {
            let n = min(discard, frames)
            produce(into: out, frames: n)
            discard -= n
        }
        produce(into: out, frames: frames)
        position += Int64(frames)
    }

    /// Writes the next `frames` frames of the (converted) stream, silence past its end.
    private func produce(into out: UnsafeMutablePointer<Float>, frames: Int) {
        let channels = cue.fileChannels
        var done = 0
        if let converter {
            while done < frames {
                if !inputDone {
                    // Output held from earlier calls first, so the converter never hoards.
                    done += input.withUnsafeBufferPointer { buffer in
                        converter.process(buffer.baseAddress!, frames: 0, into: out + done * channels, capacity: frames - done)
                    }
                    if done >= frames { break }
                    let want = min(chunk, Int((Double(frames - done) / converter.ratio).rounded(.up)) + 16)
                    let got = readInput(maximum: want)
                    done += input.withUnsafeBufferPointer { buffer in
                        converter.process(buffer.baseAddress!, frames: got, into: out + done * channels,
                                          capacity: frames - done)
                    }
                } else if !flushed {
                    // The converter's held output and its filter tail, into a buffer big
                    // enough for all of it (a short capacity would drop the rest).
                    let capacity = converter.maximumLatencyFrames + 2 * Int((Double(chunk) * converter.ratio).rounded(.up)) + 1024
                    tail = Array(repeating: 0, count: capacity * channels)
                    tailCount = tail.withUnsafeMutableBufferPointer { converter.flush(into: $0.baseAddress!, capacity: capacity) }
                    tailRead = 0
                    flushed = true
                } else if tailRead < tailCount {
                    let n = min(frames - done, tailCount - tailRead)
                    tail.withUnsafeBufferPointer { buffer in
                        (out + done * channels).update(from: buffer.baseAddress! + tailRead * channels, count: n * channels)
                    }
                    tailRead += n
                    done += n
                } else {
                    break
                }
            }
        } else {
            while done < frames && !inputDone {
                done += readFile(into: out + done * channels, maximum: frames - done)
            }
        }
        if done < frames { (out + done * channels).update(repeating: 0, count: (frames - done) * channels) }
    }

    /// Reads up to `maximum` frames of the region into `input`, looping; returns the count.
    private func readInput(maximum: Int) -> Int {
        input.withUnsafeMutableBufferPointer { buffer in
            var got = 0
            while got < maximum && !inputDone {
                got += readFile(into: buffer.baseAddress! + got * cue.fileChannels, maximum: maximum - got)
            }
            return got
        }
    }

    /// Copies up to `maximum` frames of the region, from the block read ahead (reading the next
    /// block when it is used up), moving to the next pass at the region's end; returns the count
    /// (0 only once every pass is read).
    private func readFile(into out: UnsafeMutablePointer<Float>, maximum: Int) -> Int {
        if blockRead == blockCount {
            if block.isEmpty { block = Array(repeating: 0, count: blockFrames * cue.fileChannels) }
            blockRead = 0
            blockCount = block.withUnsafeMutableBufferPointer { readFileBlock(into: $0.baseAddress!, maximum: blockFrames) }
            if blockCount == 0 { return 0 }
        }
        let n = min(maximum, blockCount - blockRead)
        let channels = cue.fileChannels
        block.withUnsafeBufferPointer { out.update(from: $0.baseAddress! + blockRead * channels, count: n * channels) }
        blockRead += n
        return n
    }

    /// Reads up to `maximum` frames from the file at the current position, moving to the next
    /// pass at the region's end; returns the count (0 only once every pass is read).
    private func readFileBlock(into out: UnsafeMutablePointer<Float>, maximum: Int) -> Int {
        if filePosition >= cue.regionEnd {
            if cue.playCount == nil || passesAfterThis > 0 {
                passesAfterThis -= 1
                filePosition = cue.regionStart
                do throws(FileError) { try reader.seek(toFrame: filePosition) } catch {
                    self.error = self.error ?? error
                    inputDone = true
                    return 0
                }
            } else {
                inputDone = true
                return 0
            }
        }
        let want = Int(min(Int64(maximum), cue.regionEnd - filePosition))
        let got: Int
        do throws(FileError) { got = try reader.read(into: out, frames: want) } catch {
            self.error = self.error ?? error
            inputDone = true
            return 0
        }
        if got == 0 {
            error = error ?? reader.truncationError ?? FileError(.truncated, path: cue.path,
                problem: "the audio ended at frame \(filePosition), before the expected \(cue.regionEnd)")
            inputDone = true
            return 0
        }
        filePosition += Int64(got)
        return got
    }
}
