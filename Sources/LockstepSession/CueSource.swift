import Lockstep
import LockstepFiles

/// A cue's audio at the session's rate: its file region, looped as asked, rate-converted when the
/// file's rate differs, read sample by sample from any position of the cue.
///
/// Runs on the engine's callback thread (it reads files); never on the realtime thread.
final class CueSource {
    let cue: SessionTimeline.Cue
    let rate: Double
    private let reader: AudioFileReader
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
    /// The first error met while reading (the rest of the cue plays as silence).
    private(set) var error: FileError?

    init(cue: SessionTimeline.Cue, rate: Double) throws(FileError) {
        self.cue = cue
        self.rate = rate
        reader = try AudioFileReader(path: cue.path, truncation: .reject)
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
    func seek(to k: Int64) {
        let region = cue.regionEnd - cue.regionStart
        let fileFrame = converter == nil ? k : Int64((Double(k) * cue.fileRate / rate).rounded())
        let pass = fileFrame / region
        if let count = cue.playCount {
            passesAfterThis = count - 1 - Int(pass)
        }
        filePosition = cue.regionStart + fileFrame % region
        inputDone = cue.playCount.map { Int(pass) >= $0 } ?? false
        flushed = false
        converter?.reset()
        position = k
        do throws(FileError) { try reader.seek(toFrame: filePosition) } catch { self.error = self.error ?? error }
    }

    /// Writes the next `frames` cue samples (interleaved, the file's channels) to `out`; past the
    /// cue's end, or after an error, it writes silence.
    func read(into out: UnsafeMutablePointer<Float>, frames: Int) {
        let channels = cue.fileChannels
        var done = 0
        if let converter {
            while done < frames {
                if !inputDone {
                    let got = readInput(maximum: chunk)
                    let produced = input.withUnsafeBufferPointer { buffer in
                        converter.process(buffer.baseAddress!, frames: got, into: out + done * channels,
                                          capacity: frames - done)
                    }
                    done += produced
                } else if !flushed {
                    done += converter.flush(into: out + done * channels, capacity: frames - done)
                    flushed = true
                } else {
                    break
                }
            }
        } else {
            while done < frames && !inputDone {
                let got = readFile(into: out + done * channels, maximum: frames - done)
                done += got
            }
        }
        if done < frames { (out + done * channels).update(repeating: 0, count: (frames - done) * channels) }
        position += Int64(frames)
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

    /// Reads up to `maximum` frames from the file at the current position, moving to the next
    /// pass at the region's end; returns the count (0 only once every pass is read).
    private func readFile(into out: UnsafeMutablePointer<Float>, maximum: Int) -> Int {
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
