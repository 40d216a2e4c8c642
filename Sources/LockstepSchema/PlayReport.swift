/// `lockstep play --json`: where the layers started on the device timeline, how long they
/// played, their peaks and every discontinuity.
public struct PlayReport: Sendable, Hashable, Codable {
    /// One layer (one file).
    public struct Layer: Sendable, Hashable, Codable {
        /// The file.
        public var file: String
        /// Its peak in dBFS over the play, rounded to 0.01 (null: silence).
        @DecibelLevel public var peakDB: Double?
        /// Its own ports (`--ports-per-file`), else absent.
        public var ports: [String]?
        /// Frames skipped because its start came too late (0 when on time).
        public var skippedFrames: Int64

        /// Creates a layer; `peakDB` is rounded.
        public init(file: String, peakDB: Double, ports: [String]?, skippedFrames: Int64) {
            self.file = file
            self.peakDB = JSONSchema.decibels(peakDB)
            self.ports = ports
            self.skippedFrames = skippedFrames
        }
    }

    /// The recording made beside the play (`--record`).
    public struct Recording: Sendable, Hashable, Codable {
        /// The file.
        public var file: String
        /// Frames written.
        public var frames: Int64
        /// The device sample time of its first frame.
        public var startSampleTime: Int64?
        /// Frames lost (written as silence).
        public var lostFrames: Int64

        /// Creates a recording record.
        public init(file: String, frames: Int64, startSampleTime: Int64?, lostFrames: Int64) {
            self.file = file
            self.frames = frames
            self.startSampleTime = startSampleTime
            self.lostFrames = lostFrames
        }
    }

    /// How long the JACK process callback (the engine's render) took, cycle by cycle.
    public struct CallbackTime: Sendable, Hashable, Codable {
        /// Callbacks measured.
        public var cycles: Int
        /// The median callback, in seconds (to 25 µs).
        public var medianSeconds: Double
        /// The 99th percentile, in seconds (to 25 µs).
        public var p99Seconds: Double
        /// The longest callback, in seconds (to 1 µs).
        public var maxSeconds: Double
        /// Callbacks that took longer than their period.
        public var overPeriodCycles: Int

        /// Creates a record.
        public init(cycles: Int, medianSeconds: Double, p99Seconds: Double, maxSeconds: Double, overPeriodCycles: Int) {
            self.cycles = cycles
            self.medianSeconds = medianSeconds
            self.p99Seconds = p99Seconds
            self.maxSeconds = maxSeconds
            self.overPeriodCycles = overPeriodCycles
        }
    }

    /// How the engine's render cycles were shared with its helper thread (more than 256 layers,
    /// a realtime server, two cores or more).
    public struct RenderHelper: Sendable, Hashable, Codable {
        /// Cycles rendered in chunks of 128 layers.
        public var sharedCycles: Int
        /// Chunks the helper thread rendered (the process thread rendered the rest).
        public var helperChunks: Int

        /// Creates a record.
        public init(sharedCycles: Int, helperChunks: Int) {
            self.sharedCycles = sharedCycles
            self.helperChunks = helperChunks
        }
    }

    /// The schema version (``JSONSchema/version``).
    public var schema = JSONSchema.version
    /// The device sample time of every layer's first frame (plus its offset).
    public var startSampleTime: Int64
    /// The same time on JACK's 32-bit frame clock (`jack_frame_time`), for other JACK clients.
    public var startJACKFrame: UInt32
    /// Frames played, from the start to the stop.
    public var frames: Int64
    /// `frames` ÷ `sampleRate`.
    public var seconds: Double
    /// The device's rate at the end.
    public var sampleRate: Int
    /// The breaks in the timeline: the most recent 10 000.
    public var discontinuities: [DiscontinuityRecord]
    /// How many breaks of each kind there were in all (also those `discontinuities` no longer
    /// holds), by kind.
    public var discontinuityCounts: [String: Int] = [:]
    /// Every layer, in argument order.
    public var layers: [Layer]
    /// Whether a signal (Ctrl-C) ended the play.
    public var interrupted: Bool
    /// The JACK server started for the play (absent: one was running).
    public var server: String?
    /// What ended the play early, if anything.
    public var error: String?
    /// The `--record` take.
    public var recording: Recording?
    /// Frames from render to the far end of the slowest connected output (JACK's latency ranges).
    public var playbackLatency: Int
    /// With `--align-outputs`: the delay applied to each master output.
    public var outputDelays: [Int]?
    /// Every output port with its connections, playback latency and compensation delay, as
    /// measured once the outputs were connected.
    public var outputs: [OutputCompensation]
    /// Sample-rate changes the layers played on through.
    public var rateChanges: [RateChangeRecord]
    /// The process callback's durations over the play (absent when nothing was measured).
    public var callbackTime: CallbackTime?
    /// The render helper's share of the work (absent: the engine rendered on JACK's thread alone).
    public var renderHelper: RenderHelper?

    /// Creates a report.
    public init(startSampleTime: Int64, startJACKFrame: UInt32, frames: Int64, sampleRate: Int,
                discontinuities: [DiscontinuityRecord], layers: [Layer], interrupted: Bool, server: String?, error: String?,
                recording: Recording?, playbackLatency: Int, outputDelays: [Int]?, outputs: [OutputCompensation] = [],
                rateChanges: [RateChangeRecord], callbackTime: CallbackTime? = nil, renderHelper: RenderHelper? = nil) {
        self.startSampleTime = startSampleTime
        self.startJACKFrame = startJACKFrame
        self.frames = frames
        seconds = sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0
        self.sampleRate = sampleRate
        self.discontinuities = discontinuities
        self.layers = layers
        self.interrupted = interrupted
        self.server = server
        self.error = error
        self.recording = recording
        self.playbackLatency = playbackLatency
        self.outputDelays = outputDelays
        self.outputs = outputs
        self.rateChanges = rateChanges
        self.callbackTime = callbackTime
        self.renderHelper = renderHelper
    }
}
