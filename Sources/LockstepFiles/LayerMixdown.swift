import Lockstep
import Synchronization

/// One input of a ``LayerMixdown``: a file, its gain, and where its first frame lands.
public struct MixdownLayer: Sendable, Hashable {
    /// The audio file.
    public var path: String
    /// Gain in dB (−∞…+12), applied by the mixer.
    public var gainDB: Double
    /// Seconds from the start of the output to the layer's first frame (≥ 0).
    public var offset: Double
    /// Explicit routing of the file's channels to the output's; nil for the default (a file with
    /// more channels than the output is downmixed, see ``ChannelMatrix/standardDownmix(from:to:)``).
    public var channelMap: ChannelMap?

    /// Creates a layer.
    public init(path: String, gainDB: Double = 0, offset: Double = 0, channelMap: ChannelMap? = nil) {
        self.path = path
        self.gainDB = gainDB
        self.offset = offset
        self.channelMap = channelMap
    }
}

/// How one layer's channels were converted to the output's.
public struct ChannelConversion: Sendable, Hashable {
    /// The layer's file.
    public var path: String
    /// The matrix used.
    public var matrix: ChannelMatrix
    /// The file's channels (from 1) that reach no output.
    public var droppedChannels: [Int] { matrix.droppedInputs.map { $0 + 1 } }

    /// Creates a record of a conversion.
    public init(path: String, matrix: ChannelMatrix) {
        self.path = path
        self.matrix = matrix
    }
}

/// What a finished ``LayerMixdown`` produced.
public struct MixdownSummary: Sendable, Hashable {
    /// The output file.
    public var outputPath: String
    /// Frames written.
    public var frames: Int64
    /// The output's sample rate.
    public var sampleRate: Double
    /// The output's channel count.
    public var channelCount: Int
    /// The output's sample format.
    public var sampleFormat: SampleFormat
    /// The output's container.
    public var fileType: AudioFileType
    /// The output's full encoding (container, sample format, codec settings).
    public var encoding: AudioFileEncoding
    /// The layers whose channels were converted (downmixed or mapped), in layer order.
    public var channelConversions: [ChannelConversion]
    /// The largest absolute sample value of the mix (before encoding; above 1.0 means clipping).
    public var peak: Float
    /// Discontinuities during the render (an offline render should have none).
    public var discontinuities: [Discontinuity]

    /// Duration in seconds.
    public var duration: Double { Double(frames) / sampleRate }
    /// Peak in dBFS.
    public var peakDB: Float { Decibels.fromLinear(peak) }
}

/// Mixes audio files as layers into one file, offline, as fast as the CPU allows — through the
/// same engine and render path as live playback.
///
/// Every layer's first frame lands on output sample `round(offset × rate)`; each layer plays
/// through its own ``FilePlayer`` (streamed, so memory stays bounded) with its mixer gain; files
/// at other rates are converted. The files are read and decoded on a ``FileStreamer`` thread
/// while the calling thread mixes and writes; each cycle waits for the refills it needs, so the
/// result does not depend on which thread is faster. The output is as long as the longest layer.
/// It is written to a temporary file that is renamed into place only when the render succeeds.
public final class LayerMixdown: @unchecked Sendable {
    /// The layers, in order.
    public let layers: [MixdownLayer]
    /// The output path; its extension picks the container.
    public let outputPath: String
    /// The output format (its sample format is the queue format nearest to the encoding's).
    public let format: StreamFormat
    /// The output's container, sample format and codec settings.
    public let encoding: AudioFileEncoding
    /// Frames rendered per cycle.
    public let period: Int
    /// Whether a layer holding less audio than it declares is refused (the default) or mixed as
    /// far as it goes.
    public let truncation: AudioFileReader.TruncationPolicy

    /// Creates a mixdown; nothing is opened until ``run(progress:)``.
    ///
    /// - Parameters:
    ///   - layers: at least one layer.
    ///   - outputPath: any ``AudioFileType`` by extension (WAV, AIFF, FLAC, CAF, W64, RF64, AU,
    ///     Ogg Vorbis, Opus, MP3).
    ///   - sampleRate: output rate (default 48000).
    ///   - channelCount: output channels (default 2).
    ///   - sampleFormat: output encoding (default: f32, or s24 for FLAC).
    ///   - period: frames per render cycle (default 4096).
    ///   - truncation: `.reject` (the default) refuses a layer that holds less audio than it
    ///     declares; `.tolerate` mixes what it holds (a killed FLAC recording, say), whether the
    ///     header shows it or decoding stops early, and its reader records a ``FileWarning``.
    /// - Throws: ``FileError`` for an unknown output type or an encoding it cannot hold.
    public convenience init(layers: [MixdownLayer], outputPath: String, sampleRate: Double = 48000, channelCount: Int = 2,
                            sampleFormat: SampleFormat? = nil, period: Int = 4096,
                            truncation: AudioFileReader.TruncationPolicy = .reject) throws(FileError) {
        let type = try AudioFileType.forOutput(path: outputPath)
        if let sampleFormat, !type.isLossy { _ = try type.libsndfileFormat(for: sampleFormat, path: outputPath) }
        try self.init(layers: layers, outputPath: outputPath,
                      encoding: AudioFileEncoding(type: type, sampleFormat: sampleFormat.map(FileSampleFormat.init)),
                      sampleRate: sampleRate, channelCount: channelCount, period: period, truncation: truncation)
    }

    /// Creates a mixdown into an output of the given encoding (any type, sample format and codec
    /// settings; see ``AudioFileEncoding/resolve(path:formatName:sampleFormat:quality:bitrateMode:)``).
    ///
    /// Each layer with more channels than the output is downmixed by
    /// ``ChannelMatrix/standardDownmix(from:to:)`` unless it has a ``MixdownLayer/channelMap``.
    /// - Throws: ``FileError`` when the encoding cannot hold the rate or channel count, or there
    ///   are no layers.
    public init(layers: [MixdownLayer], outputPath: String, encoding: AudioFileEncoding, sampleRate: Double = 48000,
                channelCount: Int = 2, period: Int = 4096,
                truncation: AudioFileReader.TruncationPolicy = .reject) throws(FileError) {
        guard !layers.isEmpty else {
            throw FileError(.invalidArgument, path: outputPath, problem: "no input files; give at least one layer to render")
        }
        self.layers = layers
        self.outputPath = outputPath
        self.encoding = encoding
        format = StreamFormat(sampleRate: sampleRate, channelCount: channelCount, sampleFormat: encoding.nearestSampleFormat)
        if (try? format.validate()) != nil {
            try encoding.check(sampleRate: sampleRate, channelCount: channelCount, path: outputPath)
        }
        self.period = period
        self.truncation = truncation
    }

    /// Renders the mix to the output file.
    ///
    /// - Parameter progress: called now and then (every 1 %) with the frames written and expected,
    ///   and once at the end.
    /// - Returns: a summary of what was written.
    /// - Throws: ``FileError`` naming the file at fault (unreadable input, bad gain or offset,
    ///   unwritable output, an output that is one of the inputs or that would not fit in its
    ///   container or on its disk); the output is then left untouched.
    public func run(progress: ((RenderProgress) -> Void)? = nil) throws(FileError) -> MixdownSummary {
        do {
            try format.validate()
        } catch {
            throw FileError(.invalidArgument, path: outputPath, problem: error.message)
        }
        try OutputSafety.refuseOverwritingInputs(output: outputPath, inputs: layers.map(\.path))
        let device: OfflineDevice
        let engine: Engine
        do {
            device = try OfflineDevice(format: StreamFormat(sampleRate: format.sampleRate, channelCount: format.channelCount,
                                                            sampleFormat: .float32),
                                       maximumFramesPerRender: period, name: "mixdown")
            // Each player keeps its default four buffers: room for 16 a queue keeps the command
            // rings small (they are written through at creation).
            engine = try Engine(device: device, maximumQueues: max(16, layers.count),
                                maximumBuffersPerQueue: 16)
        } catch {
            throw FileError(.invalidArgument, path: outputPath, problem: error.message)
        }

        // The files are read and decoded on a streaming thread while this one mixes and writes
        // (two cores: the render takes the longer of the two, not their sum). Before each cycle
        // the mix waits until every layer has a whole buffer queued past the one playing, so no
        // queue ever reaches audio still being read: the output is the same as with every refill
        // done in line, sample for sample.
        let streamer = FileStreamer(name: "lockstep.mixdown")
        defer { streamer.stop() }
        // Buffers of at least two cycles: one whole buffer queued ahead covers the next cycle.
        let bufferDuration = max(0.25, 2 * Double(period) / format.sampleRate)

        // Open every layer and schedule its start.
        var players: [FilePlayer] = []
        var starts: [Int64] = []
        var expectedEnd: Int64 = 0
        for layer in layers {
            guard TimeLimit.contains(layer.offset) else {
                throw FileError(.invalidArgument, path: layer.path,
                    problem: "offset \(layer.offset) s is invalid; use 0 to \(Int(TimeLimit.maximumSeconds)) seconds (a week)")
            }
            let player: FilePlayer
            do {
                let routing: FilePlayer.ChannelRouting = layer.channelMap.map { .map($0, outputs: format.channelCount) }
                    ?? .downmix(to: format.channelCount)
                player = try FilePlayer(path: layer.path, engine: engine, bufferDuration: bufferDuration,
                                        truncation: truncation, streamer: streamer, channels: routing)
                try player.queue.setMixerGain(decibels: layer.gainDB)
                try player.prepare()
            } catch let error as FileError {
                throw error
            } catch let error as AudioQueueError {
                // The mixdown names the layer's file with the engine's reason.
                throw FileError(error.code == .unsupportedFormat ? .unsupportedFormat : .invalidArgument,
                                path: layer.path, problem: error.message)
            } catch {
                throw FileError(.invalidArgument, path: layer.path, problem: "\(error)")
            }
            let start = Int64((layer.offset * format.sampleRate).rounded())
            let length = Int64((Double(player.totalFrames ?? 0) * format.sampleRate / player.fileFormat.sampleRate).rounded())
            expectedEnd = max(expectedEnd, start + length)
            players.append(player)
            starts.append(start)
        }

        try OutputSafety.checkSize(path: outputPath, encoding: encoding, sampleRate: format.sampleRate,
                                   channelCount: format.channelCount, frames: expectedEnd)

        // Each layer reports the device time at which it really stopped.
        let stopTimes = StopTimes(count: players.count)
        for (index, player) in players.enumerated() {
            player.queue.addEventHandler { _, event in
                if case .stopped(let sampleTime) = event { stopTimes.record(index, sampleTime) }
            }
        }
        for (player, start) in zip(players, starts) {
            do { try player.queue.start(at: start) } catch {
                throw FileError(.invalidArgument, path: player.path, problem: error.message)
            }
        }

        let output = try AudioFileWriter(path: outputPath, encoding: encoding, sampleRate: format.sampleRate,
                                         channelCount: format.channelCount)
        var written: Int64 = 0
        var peak: Float = 0
        let channels = format.channelCount
        var samples = [Float](repeating: 0, count: period * channels)
        var lastReported = -1.0
        do throws(FileError) {
            while true {
                for player in players { player.waitForRefills(leavingAtMost: player.bufferCount - 2) }
                let chunk = try renderChunk(device, into: &samples)
                let end = stopTimes.endIfAllStopped()
                var frames = chunk
                if let end { frames = Int(max(0, min(Int64(chunk), end - written))) }
                if frames > 0 {
                    peak = max(peak, samples.withUnsafeBufferPointer { Self.peak($0.baseAddress!, count: frames * channels) })
                    try samples.withUnsafeBufferPointer { (pointer) throws(FileError) in try output.write(pointer.baseAddress!, frames: frames) }
                    written += Int64(frames)
                }
                // Under `.tolerate`, a layer whose audio stops early (a cut FLAC, found only while
                // decoding) ends there, as one whose header gives it away does; its reader has
                // recorded the warning. Every other error ends the render.
                if let error = players.lazy.compactMap(\.error).first(where: { !(self.truncation == .tolerate && $0.kind == .truncated) }) {
                    throw error
                }
                if let progress, expectedEnd > 0 {
                    let fraction = min(1, Double(written) / Double(expectedEnd))
                    if fraction - lastReported >= 0.01 {
                        progress(RenderProgress(frames: written, totalFrames: expectedEnd, sampleRate: format.sampleRate))
                        lastReported = fraction
                    }
                }
                if end != nil && written >= end! { break }
            }
            try output.close()
        } catch {
            output.abort()
            throw error
        }
        progress?(RenderProgress(frames: written, totalFrames: max(written, expectedEnd), sampleRate: format.sampleRate))
        return MixdownSummary(outputPath: outputPath, frames: written, sampleRate: format.sampleRate,
                              channelCount: channels, sampleFormat: format.sampleFormat, fileType: output.type,
                              encoding: encoding,
                              channelConversions: players.compactMap { player in
                                  player.channelMatrix.map { ChannelConversion(path: player.path, matrix: $0) }
                              },
                              peak: peak, discontinuities: engine.discontinuities)
    }

    /// The largest absolute value of `count` samples (NaN is never larger: the mix holds none).
    /// Sixteen lanes at a time: a scalar `max` chain waits on itself at every sample and took a
    /// tenth of a `render`'s time. (`session render` measures its mix with it too.)
    public static func peak(_ samples: UnsafePointer<Float>, count: Int) -> Float {
        let raw = UnsafeRawPointer(samples)
        var peaks = SIMD16<Float>()
        var i = 0
        while i + 16 <= count {
            let v = raw.loadUnaligned(fromByteOffset: 4 * i, as: SIMD16<Float>.self)
            let magnitude = v.replacing(with: -v, where: v .< 0)
            peaks.replace(with: magnitude, where: magnitude .> peaks)
            i += 16
        }
        var peak = peaks.max()
        while i < count {
            let a = abs(samples[i])
            if a > peak { peak = a }
            i += 1
        }
        return peak
    }

    private func renderChunk(_ device: OfflineDevice, into samples: inout [Float]) throws(FileError) -> Int {
        do {
            try samples.withUnsafeMutableBytes { raw in
                _ = try device.render(frames: period, into: raw)
            }
        } catch let error as AudioQueueError {
            throw FileError(.ioError, path: outputPath, problem: error.message)
        } catch {
            throw FileError(.ioError, path: outputPath, problem: "\(error)")
        }
        return period
    }
}

/// Records the device sample time at which each layer's queue stopped.
final class StopTimes: Sendable {
    private let times: Mutex<[Int64?]>

    init(count: Int) { times = Mutex(Array(repeating: nil, count: count)) }

    func record(_ index: Int, _ sampleTime: Int64) {
        times.withLock { if $0[index] == nil { $0[index] = sampleTime } }
    }

    /// The latest stop time once every layer has stopped, else nil.
    func endIfAllStopped() -> Int64? {
        times.withLock { times in
            times.contains(where: { $0 == nil }) ? nil : times.compactMap { $0 }.max()
        }
    }
}
