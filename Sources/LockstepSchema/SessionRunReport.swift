/// `lockstep session run --json`: where the session started, where it ended, its cues and every
/// break, late start and control surface's counts.
public struct SessionRunReport: Sendable, Hashable, Codable {
    /// A start, or a control change on a layer, that came too late for its device sample: the
    /// layers started (the layer's new audio began) at the earliest possible sample instead,
    /// skipping `skippedFrames` frames so that they stay on the session's timeline.
    public struct LateStart: Sendable, Hashable, Codable {
        /// The session sample the start was for.
        public var position: Int64
        /// The device sample at which the layers really started.
        public var sampleTime: Int64
        /// The frames skipped (the frames the start was late by).
        public var skippedFrames: Int64

        /// Creates a record.
        public init(position: Int64, sampleTime: Int64, skippedFrames: Int64) {
            self.position = position
            self.sampleTime = sampleTime
            self.skippedFrames = skippedFrames
        }
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The session file.
    public var file: String
    /// The device sample time of session sample `from` (absent: it never started).
    public var startSampleTime: Int64?
    /// The session sample it started from (`--from`).
    public var from: Int64
    /// The session sample it ended on.
    public var endPosition: Int64
    /// `endPosition` in seconds.
    public var seconds: Double
    /// The session's rate (the device's, at the end).
    public var sampleRate: Int
    /// Whether a signal (Ctrl-C) ended it.
    public var interrupted: Bool
    /// The breaks in the timeline: the most recent 10 000.
    public var discontinuities: [DiscontinuityRecord]
    /// How many breaks of each kind there were in all (also those `discontinuities` no longer
    /// holds), by kind.
    public var discontinuityCounts: [String: Int] = [:]
    /// Plain GOs the double-GO window ignored (`--double-go`).
    public var ignoredGos = 0
    /// How the run was resumed from its journal (`--resume`; absent: it was not).
    public var resumed: ControlStatus.Resumed?
    /// JACK's frame time of `startSampleTime` (absent when the session never started or the device
    /// is not JACK): to compare with other JACK clients' frames.
    public var startJACKFrame: UInt32?
    /// Every cue, as placed by the end (manual cues where they were fired).
    public var cues: [TimelineReport.Cue]
    /// What ended it early, if anything.
    public var error: String?
    /// The JACK server started for it (absent: one was running).
    public var server: String?
    /// Cues that started late.
    public var lateStarts: [LateStart]
    /// Sample-rate changes it played on through.
    public var rateChanges: [RateChangeRecord]
    /// The OSC (UDP) server's counts, with `--osc`.
    public var osc: OSCStatistics?
    /// The OSC over TCP server's counts, with `--osc-tcp`.
    public var oscTCP: OSCStatistics?
    /// The MIDI surface's counts, with `--midi`.
    public var midi: MIDIInputSummary?
    /// The web cue page's counts, with `--web`.
    public var web: WebStatistics?
    /// The recording of the mix, with `--record`.
    public var recording: PlayReport.Recording?
    /// Every output port with its connections, playback latency and compensation delay, as
    /// measured once the outputs were connected (later changes are discontinuities).
    public var outputs: [OutputCompensation]
    /// The process callback's durations over the run (absent when nothing was measured), as in
    /// ``PlayReport/callbackTime``.
    public var callbackTime: PlayReport.CallbackTime?
    /// The render helper's share of the work (absent: the engine rendered on JACK's thread
    /// alone: 256 layers or fewer, a server that is not realtime, one core), as in
    /// ``PlayReport/renderHelper``.
    public var renderHelper: PlayReport.RenderHelper?

    /// Creates a report.
    public init(file: String, startSampleTime: Int64?, from: Int64, endPosition: Int64, sampleRate: Int, interrupted: Bool,
                discontinuities: [DiscontinuityRecord], cues: [TimelineReport.Cue], error: String?, server: String?,
                lateStarts: [LateStart], rateChanges: [RateChangeRecord], osc: OSCStatistics?, oscTCP: OSCStatistics?,
                midi: MIDIInputSummary?, web: WebStatistics? = nil, recording: PlayReport.Recording? = nil,
                outputs: [OutputCompensation] = [], callbackTime: PlayReport.CallbackTime? = nil,
                renderHelper: PlayReport.RenderHelper? = nil) {
        self.file = file
        self.startSampleTime = startSampleTime
        self.from = from
        self.endPosition = endPosition
        seconds = sampleRate > 0 ? Double(endPosition) / Double(sampleRate) : 0
        self.sampleRate = sampleRate
        self.interrupted = interrupted
        self.discontinuities = discontinuities
        self.cues = cues
        self.error = error
        self.server = server
        self.lateStarts = lateStarts
        self.rateChanges = rateChanges
        self.osc = osc
        self.oscTCP = oscTCP
        self.midi = midi
        self.web = web
        self.recording = recording
        self.outputs = outputs
        self.callbackTime = callbackTime
        self.renderHelper = renderHelper
    }
}
