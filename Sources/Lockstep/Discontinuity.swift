/// A break in the timeline: something made the played audio deviate from the scheduled audio.
///
/// Every discontinuity is delivered as an event (``Engine/discontinuities``,
/// ``Engine/addDiscontinuityHandler(_:)``, ``OutputQueue/events``) and sets the discontinuity flag
/// that ``OutputQueue/currentTime(timeline:)`` reports through a ``Timeline``.
public struct Discontinuity: Sendable, Hashable, CustomStringConvertible {
    /// What kind of break happened.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The device missed a deadline (JACK xrun). ``Discontinuity/length`` is the number of frames
        /// the device's clock skipped (time that passed at the hardware while nothing was rendered
        /// or captured; 0 when the clock did not skip), ``Discontinuity/detail`` JACK's delay in µs.
        /// The timeline stays true across a skip: output queues that skip to stay aligned skip as
        /// many frames of their audio (``LateBufferPolicy``), input queues record as much silence.
        case xrun
        /// A running queue ran out of enqueued audio: it played silence for ``Discontinuity/length``
        /// frames, then resumed at the sample it would have reached, staying aligned. (Also a
        /// JACK device's steering stage that ran short: its master outputs played that much
        /// silence.)
        case underrun
        /// The device's sample rate changed.
        case sampleRateChange
        /// The device's period (frames per render cycle) changed: ``Discontinuity/sampleTime`` is the
        /// first frame rendered at the new period, ``Discontinuity/detail`` the new period. The audio
        /// stays continuous: no frame is lost or inserted.
        case bufferSizeChange
        /// The server's own frame clock (JACK's `jack_frame_time`) jumped against the frames really
        /// rendered — as jackd2 does at every period change, by (new − old period). The device
        /// timeline does not jump: it counts the frames rendered and captured. ``Discontinuity/length``
        /// is the jump in frames (negative when the server's clock fell behind), and the device's
        /// mapping between its sample time and the server's frame time moves by as much.
        case clockJump
        /// The delays that align the device's outputs changed (playback latency compensation on; a
        /// port was connected, or JACK announced new latencies): ``Discontinuity/detail`` is the
        /// new latency from render to the outputs' far end in frames, ``Discontinuity/length`` the
        /// change (signed). Ports whose delay changed repeat or skip that many frames once.
        case playbackLatencyChange
        /// The delays that align the device's inputs changed (inputs of different capture latency):
        /// ``Discontinuity/detail`` is the new largest capture latency in frames,
        /// ``Discontinuity/length`` the change. Input queues keep the latency they started with
        /// until they are started again.
        case captureLatencyChange
        /// The server went away and the device waits for it to come back
        /// (`JACKDevice.Options.survivesServerRestart`): queues hold at ``Discontinuity/sampleTime``,
        /// the end of the last rendered cycle.
        case serverLost
        /// The device is back on a restarted server: ``Discontinuity/sampleTime`` is the first frame
        /// rendered there (the timeline goes on from the last frame rendered before), and
        /// ``Discontinuity/detail`` how long the server was away, in milliseconds.
        case serverRestart
        /// The device entered or left freewheel (faster than realtime) mode.
        case freewheel
        /// The device (for example the JACK server) went away.
        case shutdown
        /// An input queue's ring overflowed (its callback was too late for too long):
        /// ``Discontinuity/length`` frames were lost and replaced by exactly that much silence.
        case overflow
        /// A run that stopped without ending (a crash, a kill) was resumed from its journal:
        /// ``Discontinuity/sampleTime`` is the device sample it plays on from,
        /// ``Discontinuity/length`` the session samples between the last one journaled and the one
        /// it plays on from, ``Discontinuity/detail`` the milliseconds between the two.
        case resume
    }

    /// The kind of break.
    public var kind: Kind
    /// The device sample time at which it began.
    public var sampleTime: Int64
    /// Its length in device frames, where known: the silence of an underrun, the frames an xrun
    /// skipped, the frames lost by an overflow, the signed jump of a ``Kind/clockJump``, the frames
    /// rendered in freewheel mode (on the freewheel-off event); 0 otherwise.
    public var length: Int64
    /// The names of the queues affected (every queue for device-level breaks).
    public var queues: [String]
    /// A kind-specific detail: the xrun delay in microseconds, the new rate or period size, or
    /// 1/0 for freewheel on/off; 0 when unused.
    public var detail: Double

    /// Creates a discontinuity record.
    public init(kind: Kind, sampleTime: Int64, length: Int64 = 0, queues: [String] = [], detail: Double = 0) {
        self.kind = kind
        self.sampleTime = sampleTime
        self.length = length
        self.queues = queues
        self.detail = detail
    }

    /// For example `underrun at sample 48000 for 512 frames (drums)`.
    public var description: String {
        var text = "\(kind.rawValue) at sample \(sampleTime)"
        if kind == .clockJump {
            text += " by \(length > 0 ? "+" : "")\(length) frames"
        } else if length > 0 {
            text += " for \(length) frames"
        }
        if !queues.isEmpty { text += " (\(queues.joined(separator: ", ")))" }
        return text
    }
}

extension Discontinuity.Kind {
    @inline(__always)
    var code: Int64 {
        switch self {
        case .xrun: 0
        case .underrun: 1
        case .sampleRateChange: 2
        case .bufferSizeChange: 3
        case .freewheel: 4
        case .shutdown: 5
        case .overflow: 6
        case .clockJump: 7
        case .playbackLatencyChange: 8
        case .captureLatencyChange: 9
        case .serverLost: 10
        case .serverRestart: 11
        case .resume: 12
        }
    }

    init(code: Int64) {
        switch code {
        case 0: self = .xrun
        case 1: self = .underrun
        case 2: self = .sampleRateChange
        case 3: self = .bufferSizeChange
        case 4: self = .freewheel
        case 6: self = .overflow
        case 7: self = .clockJump
        case 8: self = .playbackLatencyChange
        case 9: self = .captureLatencyChange
        case 10: self = .serverLost
        case 11: self = .serverRestart
        case 12: self = .resume
        default: self = .shutdown
        }
    }
}
