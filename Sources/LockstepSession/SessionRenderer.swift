import Lockstep
import LockstepFiles
import LockstepTimecode

/// Renders a session offline to an audio file, through the same ``SessionPlayer`` and engine
/// as a live run, as fast as the CPU allows.
///
/// Output sample N is session sample N. Manual cues play only where ``manualCues`` places them.
public struct SessionRenderer: Sendable {
    /// The session.
    public var session: Session
    /// The output file; its extension picks the type (any ``AudioFileType``) unless ``encoding`` does.
    public var outputPath: String
    /// The render rate (default: the session's `rate`).
    public var rate: Double
    /// The output encoding (default: the container's, f32 for WAV).
    public var sampleFormat: SampleFormat?
    /// The full output encoding (type, sample format, codec settings), overriding the path's
    /// extension and ``sampleFormat``; nil to use them.
    public var encoding: AudioFileEncoding?
    /// Manual cues to fire, by name, at these session times.
    public var manualCues: [(cue: String, at: SessionTime)]
    /// Length to render; nil: until every placed cue has ended (required if one loops forever).
    public var duration: SessionTime?
    /// Control carried out while rendering (the commands of a MIDI file, say), if any.
    public var control: RenderControl?
    /// The double-GO window in seconds for plain GOs of ``control`` (``SessionPlayer/doubleGoWindow``;
    /// 0, the default: none). ``manualCues`` name their cues and are never ignored.
    public var doubleGoSeconds = 0.0
    /// SMPTE LTC written into one channel of the file, following session time (nil: none).
    public var timecode: TimecodeChannel?

    /// Commands carried out during a render, each on its sample: before each block (of 256
    /// frames), `apply` is called with the player and the session sample three blocks on, and
    /// carries out every command placed before it (on the player, at its sample) — two blocks
    /// ahead of the device, as a live device's two periods.
    public struct RenderControl: Sendable {
        /// The last session sample a command acts on: the render runs at least to here.
        public var lastSample: Int64
        /// Carries out the commands placed before the session sample given, on the player given;
        /// throws to end the render.
        public var apply: @Sendable (SessionPlayer, Int64) throws -> Void

        /// Creates the control.
        public init(lastSample: Int64, apply: @escaping @Sendable (SessionPlayer, Int64) throws -> Void) {
            self.lastSample = lastSample
            self.apply = apply
        }
    }

    /// What a render produced.
    public struct Summary: Sendable, Hashable {
        /// The output file.
        public var outputPath: String
        /// Frames written.
        public var frames: Int64
        /// The rate.
        public var rate: Double
        /// The channels.
        public var channelCount: Int
        /// The queue sample format nearest to the file's (32-bit float for the lossy codecs).
        public var sampleFormat: SampleFormat
        /// The file's encoding (type, sample format, codec settings).
        public var encoding: AudioFileEncoding
        /// The largest absolute sample of the mix (above 1.0 clips).
        public var peak: Float
        /// The resolved timeline (manual cues placed, commands carried out).
        public var timeline: SessionTimeline
        /// What the MIDI and network cues sent, each on its output sample, in time order: planned
        /// before each block as `session run` plans them live.
        public var messages: [CueMessage] = []
    }

    /// Creates a renderer.
    public init(session: Session, outputPath: String, rate: Double? = nil, sampleFormat: SampleFormat? = nil,
                encoding: AudioFileEncoding? = nil,
                manualCues: [(cue: String, at: SessionTime)] = [], duration: SessionTime? = nil) {
        self.session = session
        self.encoding = encoding
        self.outputPath = outputPath
        self.rate = rate ?? session.document.rate
        self.sampleFormat = sampleFormat
        self.manualCues = manualCues
        self.duration = duration
    }

    /// Renders the session.
    /// - Parameter progress: called now and then (every 1 %) with the frames written and expected,
    ///   and once at the end.
    /// - Returns: what was written.
    /// - Throws: ``SessionError`` for a timeline that cannot be built at ``rate``;
    ///   ``PlayerError`` for a bad manual cue or a session with no end; ``FileError`` for the
    ///   output or an input that fails while reading (the output is then not created);
    ///   ``TimecodeError`` for a ``timecode`` channel the file cannot have.
    public func run(progress: ((RenderProgress) -> Void)? = nil) throws -> Summary {
        let encoding: AudioFileEncoding
        if let chosen = self.encoding {
            encoding = chosen
        } else {
            let type = try AudioFileType.forOutput(path: outputPath)
            if let sampleFormat, !type.isLossy { _ = try type.libsndfileFormat(for: sampleFormat, path: outputPath) }
            encoding = AudioFileEncoding(type: type, sampleFormat: sampleFormat.map(FileSampleFormat.init))
        }
        let channels = session.document.channelCount
        let ltc = try timecode.map { (timecode) throws(TimecodeError) in try timecode.signal(sessionChannels: channels, rate: rate) }
        let fileChannels = timecode.map { max(channels, $0.channel + 1) } ?? channels
        // With control, small blocks and commands carried out two blocks ahead of their sample, as
        // a live device's two periods: the buffers a command cuts come back and are computed again
        // before the device reaches its sample.
        let period = control == nil ? 4096 : 256
        let device = try OfflineDevice(format: StreamFormat(sampleRate: rate, channelCount: channels, sampleFormat: .float32),
                                       maximumFramesPerRender: period, name: "session-render")
        // The player circulates five buffers a layer: room for 16 keeps the command rings (written
        // through at creation) small, as the mixdown's.
        let engine = try Engine(device: device,
                                maximumQueues: max(16, session.document.layers.count), maximumBuffersPerQueue: 16)
        let player = try SessionPlayer(session: session, engine: engine)
        player.doubleGoWindow = Int64((doubleGoSeconds * rate).rounded())
        // In time order: a cue given twice is fired again at its later time.
        let placements = manualCues.enumerated().map { (cue: $0.element.cue, at: $0.element.at.samples(at: rate), order: $0.offset) }
            .sorted { ($0.at, $0.order) < ($1.at, $1.order) }
        for placement in placements { try player.go(placement.cue, atPosition: placement.at) }
        /// Where the render ends with the timeline as it is now.
        func plannedEnd() throws -> Int64 {
            if let duration { return duration.samples(at: rate) }
            let timeline = player.timeline
            guard let natural = timeline.end else {
                let forever = timeline.cues.first { $0.start != nil && $0.length == nil }?.name ?? "?"
                throw PlayerError(.wrongState, "cue '\(forever)' loops forever, so the render has no end; give --duration or a loop count")
            }
            return max(natural, control.map { $0.lastSample + 1 } ?? 0)
        }
        var end = try plannedEnd()
        guard end > 0 else { throw PlayerError(.wrongState, "the session is empty: nothing is placed on its timeline (are all cues manual? place them with --go CUE@TIME)") }
        try OutputSafety.refuseOverwritingInputs(output: outputPath, inputs: session.document.cues.map(\.resolvedFile).filter { !$0.isEmpty } + [session.document.path])
        try OutputSafety.checkSize(path: outputPath, encoding: encoding, sampleRate: rate, channelCount: fileChannels, frames: end)
        try player.start(from: 0, at: 0)
        let writer = try AudioFileWriter(path: outputPath, encoding: encoding, sampleRate: rate, channelCount: fileChannels)
        var written: Int64 = 0
        var peak: Float = 0
        var samples = [Float](repeating: 0, count: period * channels)
        // The file's frames when LTC adds a channel to the mix's (the mix copied in, LTC added).
        var fileSamples = [Float](repeating: 0, count: fileChannels == channels ? 0 : period * fileChannels)
        var reported = -1.0
        let sendsMessages = session.document.cues.contains { $0.action.type == .midi || $0.action.type == .network }
        var messages: [CueMessage] = []
        var plannedUntil: Int64 = 0
        // (A MIDI or network cue on the natural end, the last cue's, is sent too.)
        let messagesEnd = { (end: Int64) in end + (duration == nil ? 1 : 0) }
        do {
            while written < end {
                if let control {
                    try control.apply(player, written + 3 * Int64(period))
                    end = try plannedEnd()          // commands may place cues further on
                    guard written < end else { break }
                }
                if sendsMessages {
                    plannedUntil = min(written + Int64(period), messagesEnd(end))
                    messages += player.schedule.cueMessages(from: written, until: plannedUntil, midi: true, network: true)
                }
                try samples.withUnsafeMutableBytes { raw in _ = try device.render(frames: period, into: raw) }
                let frames = Int(min(Int64(period), end - written))
                peak = max(peak, samples.withUnsafeBufferPointer { LayerMixdown.peak($0.baseAddress!, count: frames * channels) })
                if let ltc, let timecode {
                    TimecodeChannel.add(ltc, channel: timecode.channel, from: written, frames: frames,
                                        mix: &samples, channels: channels, into: &fileSamples, fileChannels: fileChannels)
                }
                try (fileChannels == channels ? samples : fileSamples).withUnsafeBufferPointer { (pointer) throws(FileError) in
                    try writer.write(pointer.baseAddress!, frames: frames)
                }
                written += Int64(frames)
                if let error = player.error { throw error }
                if let progress {
                    let fraction = Double(written) / Double(end)
                    if fraction - reported >= 0.01 {
                        progress(RenderProgress(frames: written, totalFrames: end, sampleRate: rate))
                        reported = fraction
                    }
                }
            }
            if sendsMessages && plannedUntil < messagesEnd(end) {
                // The end on a block's boundary: its own sample is left.
                messages += player.schedule.cueMessages(from: plannedUntil, until: messagesEnd(end), midi: true, network: true)
            }
            try writer.close()
        } catch {
            writer.abort()
            player.finishRendering()
            throw error
        }
        player.finishRendering()
        progress?(RenderProgress(frames: written, totalFrames: end, sampleRate: rate))
        return Summary(outputPath: outputPath, frames: written, rate: rate, channelCount: fileChannels,
                       sampleFormat: writer.format.sampleFormat, encoding: encoding, peak: peak, timeline: player.timeline, messages: messages)
    }
}
