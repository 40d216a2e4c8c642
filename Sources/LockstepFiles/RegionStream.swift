import Lockstep

/// An audio source as a layer plays it: a region of it, looped as asked, converted to the
/// output's rate (libsoxr) and then through a channel matrix, read frame after frame from any
/// output position. The one stage between a file and a queue: ``FilePlayer`` (`lockstep play`)
/// and a session's cues read through it.
///
/// Positions are output frames: frames at ``outputRate`` from the start of the first pass.
/// Same-rate sources seek exactly. A converted source restarts its converter a little before the
/// target, on an input frame whose output falls on a whole output frame, and discards the output
/// before it: the filter is warmed up on the same input as an uninterrupted play, so the frames
/// match it to within rounding (no warm-up transient, no fractional shift).
///
/// Used by one thread at a time (a streamer's lane, or the thread rendering offline), never the
/// realtime thread: it reads files and converts rates.
public final class RegionStream {
    /// The audio read.
    public let source: any AudioSource
    /// The first source frame of each pass.
    public let regionStart: Int64
    /// The source frame after the last one of each pass (`Int64.max` for a stream whose length is
    /// not known: it plays until its end).
    public let regionEnd: Int64
    /// Passes played; nil loops until stopped.
    public let playCount: Int?
    /// Output frames per second.
    public let outputRate: Double
    /// The conversion from the source's channels to the output's, after rate conversion; nil
    /// when the output has the source's channels.
    public let channelMatrix: ChannelMatrix?
    /// Channels per output frame.
    public var outputChannels: Int { channelMatrix?.outputCount ?? source.format.channelCount }
    /// The next output frame ``read(into:frames:)`` produces.
    public private(set) var position: Int64 = 0
    /// The first error met while reading; the stream ends there.
    public private(set) var error: FileError?

    private let converter: SoxrRateConverter?
    private let sourceChannels: Int
    /// The next source frame to read, and how many passes remain after the current one.
    private var sourcePosition: Int64
    private var passesAfterThis: Int
    private var inputDone = false
    private var flushed = false
    /// Converter input, read `chunk` frames at a time.
    private var input: [Float] = []
    private let chunk = 1024
    /// Source frames read ahead in blocks of `blockFrames` (0: read straight into the caller's
    /// buffer). Allocated at the first read.
    private var block: [Float] = []
    private let blockFrames: Int
    private var blockCount = 0
    private var blockRead = 0
    /// The converter's last output (held frames and filter tail), served after the input ends.
    private var tail: [Float] = []
    private var tailCount = 0
    private var tailRead = 0
    /// Converted frames still to drop after a seek (the warm-up before the target).
    private var discard = 0
    /// Frames before the channel matrix.
    private var unmapped: [Float] = []

    /// A stream of `source`.
    ///
    /// - Parameters:
    ///   - source: the audio; the stream seeks it to `region`'s start (a stream source plays
    ///     once, from where it is).
    ///   - region: the source frames each pass plays (default: all of them).
    ///   - playCount: passes to play, at least 1; nil loops until stopped.
    ///   - outputRate: the rate of the frames read (default: the source's own).
    ///   - channelMatrix: a conversion to the output's channels; its inputs must be the source's.
    ///   - readBlockFrames: source frames read at a time when the caller asks for fewer (reading
    ///     many small pieces costs more in system calls than in mixing); 0 reads what is asked.
    /// - Throws: ``FileError`` for an empty or out-of-range region, a play count under 1, a
    ///   matrix for other channels, rates libsoxr cannot convert, or a failed seek.
    public init(source: any AudioSource, region: Range<Int64>? = nil, playCount: Int? = 1,
                outputRate: Double? = nil, channelMatrix: ChannelMatrix? = nil,
                readBlockFrames: Int = 0) throws(FileError)
    {
        let region = region ?? 0..<source.frameCount
        guard region.lowerBound >= 0, !region.isEmpty, region.upperBound <= source.frameCount else {
            throw FileError(.invalidArgument, path: source.path,
                problem: "the region \(region.lowerBound)..<\(region.upperBound) is empty or outside the file's \(source.frameCount) frames; choose a start and end inside the file")
        }
        if let playCount, playCount < 1 {
            throw FileError(.invalidArgument, path: source.path, problem: "play count \(playCount) must be at least 1")
        }
        if source.isStream, region.lowerBound != 0 || playCount != 1 {
            throw FileError(.invalidArgument, path: source.path,
                problem: "a stream plays once, from its start, as it arrives; it cannot start later or loop")
        }
        if let channelMatrix, channelMatrix.inputCount != source.format.channelCount {
            throw FileError(.invalidArgument, path: source.path,
                problem: "a channel matrix for \(channelMatrix.inputCount) channels cannot take the file's \(source.format.channelCount)")
        }
        let rate = outputRate ?? source.format.sampleRate
        if rate != source.format.sampleRate {
            do {
                converter = try SoxrRateConverter(inputRate: source.format.sampleRate, outputRate: rate,
                                                  channelCount: source.format.channelCount)
            } catch {
                throw FileError(.unsupportedFormat, path: source.path, problem: "\(error)")
            }
        } else {
            converter = nil
        }
        self.source = source
        regionStart = region.lowerBound
        regionEnd = region.upperBound
        self.playCount = playCount
        self.outputRate = rate
        self.channelMatrix = channelMatrix
        sourceChannels = source.format.channelCount
        blockFrames = max(0, readBlockFrames)
        sourcePosition = region.lowerBound
        passesAfterThis = (playCount ?? 2) - 1
        if !source.isStream { try source.seek(toFrame: region.lowerBound) }
    }

    /// Whether every frame has been read (the last pass, a stream's end, or an error).
    public var isFinished: Bool { inputDone && (converter == nil || (flushed && tailRead >= tailCount)) }

    /// The output frames of the whole play, nil when it loops forever or is a stream whose length
    /// is not known yet.
    public var totalFrames: Int64? {
        guard let playCount, regionEnd != .max else { return nil }
        let frames = (regionEnd - regionStart) * Int64(playCount)
        return converter == nil ? frames : Int64((Double(frames) * outputRate / source.format.sampleRate).rounded())
    }

    /// The output frame where source frame `frame` of the whole play (counting every pass) plays.
    public func outputFrame(forSourceFrame frame: Int64) -> Int64 {
        converter == nil ? frame : Int64((Double(frame) * outputRate / source.format.sampleRate).rounded())
    }

    /// Moves to output frame `k` (past the end: nothing is left to read). A stream cannot move.
    public func seek(to k: Int64) {
        guard !source.isStream else { return }
        let region = regionEnd - regionStart
        var streamFrame = max(0, k)
        discard = 0
        if let converter {
            let fileRate = Int64(source.format.sampleRate.rounded()), rate = Int64(outputRate.rounded())
            let g = Self.gcd(rate, fileRate)
            let inStep = max(1, fileRate / g)
            let outStep = max(1, rate / g)
            let target = Int64((Double(streamFrame) * source.format.sampleRate / outputRate).rounded(.down))
            let preroll = Int64(converter.maximumLatencyFrames * 2 + 512)
            let first = max(0, target - preroll) / inStep * inStep
            discard = Int(streamFrame - first / inStep * outStep)
            streamFrame = first
        }
        let pass = streamFrame / region
        if let playCount { passesAfterThis = playCount - 1 - Int(pass) }
        sourcePosition = regionStart + streamFrame % region
        inputDone = playCount.map { Int(pass) >= $0 } ?? false
        flushed = false
        tailCount = 0
        tailRead = 0
        converter?.reset()
        position = max(0, k)
        blockCount = 0
        blockRead = 0
        do throws(FileError) { try source.seek(toFrame: sourcePosition) } catch { fail(error) }
    }

    private static func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? max(1, a) : gcd(b, a % b) }

    /// Writes up to `frames` next output frames (interleaved, ``outputChannels`` channels) to
    /// `out`; returns how many, fewer only at the end of the play (or an error). A stream source
    /// waits for its frames to arrive.
    public func read(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        guard frames > 0 else { return 0 }
        guard let channelMatrix else { return produceDiscarding(into: out, frames: frames) }
        if unmapped.count < frames * sourceChannels { unmapped = Array(repeating: 0, count: frames * sourceChannels) }
        return unmapped.withUnsafeMutableBufferPointer { buffer in
            let done = produceDiscarding(into: buffer.baseAddress!, frames: frames)
            channelMatrix.apply(buffer.baseAddress!, frames: done, into: out)
            return done
        }
    }

    /// The next `frames` frames of the converted stream after the frames a seek discards.
    private func produceDiscarding(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        while discard > 0 {
            let n = min(discard, frames)
            let got = produce(into: out, frames: n)
            discard -= n
            if got < n { discard = 0 }
        }
        let done = produce(into: out, frames: frames)
        position += Int64(done)
        return done
    }

    /// Writes up to `frames` frames of the (converted) stream in the source's channels.
    private func produce(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let channels = sourceChannels
        guard let converter else {
            var done = 0
            while done < frames && !inputDone { done += readRegion(into: out + done * channels, maximum: frames - done) }
            return done
        }
        if input.isEmpty { input = Array(repeating: 0, count: chunk * channels) }
        var done = 0
        while done < frames {
            if !inputDone {
                // Output held from earlier calls first, so the converter never hoards.
                done += input.withUnsafeBufferPointer { buffer in
                    converter.process(buffer.baseAddress!, frames: 0, into: out + done * channels, capacity: frames - done)
                }
                if done >= frames { break }
                let want = min(chunk, Int((Double(frames - done) / converter.ratio).rounded(.up)) + 16)
                let got = input.withUnsafeMutableBufferPointer { buffer in
                    var got = 0
                    while got < want && !inputDone {
                        got += readRegion(into: buffer.baseAddress! + got * channels, maximum: want - got)
                    }
                    return got
                }
                done += input.withUnsafeBufferPointer { buffer in
                    converter.process(buffer.baseAddress!, frames: got, into: out + done * channels, capacity: frames - done)
                }
            } else if !flushed {
                // The converter's held output and its filter tail, into a buffer big enough
                // for all of it (a short capacity would drop the rest).
                let capacity = converter.maximumLatencyFrames + 2 * Int((Double(chunk) * converter.ratio).rounded(.up)) + 1024
                if tail.count < capacity * channels { tail = Array(repeating: 0, count: capacity * channels) }
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
        return done
    }

    /// Copies up to `maximum` source frames of the region, through the block read ahead when
    /// there is one; returns the count (0 only once every pass is read). What the block holds
    /// unread goes first; a read of a block's size or more, with the block empty, goes straight
    /// to the source.
    private func readRegion(into out: UnsafeMutablePointer<Float>, maximum: Int) -> Int {
        guard blockFrames > 0 else { return readSource(into: out, maximum: maximum) }
        if blockRead == blockCount {
            if maximum >= blockFrames { return readSource(into: out, maximum: maximum) }
            if block.isEmpty { block = Array(repeating: 0, count: blockFrames * sourceChannels) }
            blockRead = 0
            blockCount = block.withUnsafeMutableBufferPointer { readSource(into: $0.baseAddress!, maximum: blockFrames) }
            if blockCount == 0 { return 0 }
        }
        let n = min(maximum, blockCount - blockRead)
        let channels = sourceChannels
        block.withUnsafeBufferPointer { out.update(from: $0.baseAddress! + blockRead * channels, count: n * channels) }
        blockRead += n
        return n
    }

    /// Reads up to `maximum` frames from the source at the current position, moving to the next
    /// pass at the region's end; returns the count (0 only once every pass is read).
    private func readSource(into out: UnsafeMutablePointer<Float>, maximum: Int) -> Int {
        if sourcePosition >= regionEnd {
            guard playCount == nil || passesAfterThis > 0 else {
                inputDone = true
                return 0
            }
            passesAfterThis -= 1
            sourcePosition = regionStart
            do throws(FileError) { try source.seek(toFrame: sourcePosition) } catch {
                fail(error)
                return 0
            }
        }
        let want = Int(min(Int64(maximum), regionEnd - sourcePosition))
        let got: Int
        do throws(FileError) { got = try source.read(into: out, frames: want) } catch {
            fail(error)
            return 0
        }
        if got == 0 {
            if !source.isStream {
                error = error ?? source.truncationError ?? FileError(.truncated, path: source.path,
                    problem: "the audio ended at frame \(sourcePosition), before the expected \(regionEnd)")
            }
            inputDone = true
            return 0
        }
        sourcePosition += Int64(got)
        return got
    }

    private func fail(_ problem: FileError) {
        error = error ?? problem
        inputDone = true
    }
}
