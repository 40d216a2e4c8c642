/// The error every Lockstep queue, engine and device operation throws.
///
/// Each error carries an Audio Queue result code (``Code``, whose raw values are Apple's
/// `OSStatus` values, so ported code can compare them) and a sentence that says what went wrong
/// and what to do about it.
public struct AudioQueueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Audio Queue result codes, with Apple's numeric values.
    public enum Code: Int32, Sendable, CaseIterable, CustomStringConvertible {
        /// `kAudioQueueErr_InvalidBuffer`: the buffer does not belong to this queue.
        case invalidBuffer = -66687
        /// `kAudioQueueErr_BufferEmpty`: the buffer holds no audio (byte size 0).
        case bufferEmpty = -66686
        /// `kAudioQueueErr_DisposalPending`: the queue is being disposed of.
        case disposalPending = -66685
        /// `kAudioQueueErr_InvalidProperty`: the property is not valid for this object.
        case invalidProperty = -66684
        /// `kAudioQueueErr_InvalidPropertySize`: the property value has the wrong size.
        case invalidPropertySize = -66683
        /// `kAudioQueueErr_InvalidParameter`: the parameter ID or value is invalid.
        case invalidParameter = -66682
        /// `kAudioQueueErr_CannotStart`: the queue or device cannot start.
        case cannotStart = -66681
        /// `kAudioQueueErr_InvalidDevice`: the device is missing, stopped or unusable.
        case invalidDevice = -66680
        /// `kAudioQueueErr_BufferInQueue`: the buffer cannot be freed while it is enqueued.
        case bufferInQueue = -66679
        /// `kAudioQueueErr_InvalidRunState`: the operation is not allowed in the queue's run state.
        case invalidRunState = -66678
        /// `kAudioQueueErr_InvalidQueueType`: the operation needs an output (or input) queue.
        case invalidQueueType = -66677
        /// `kAudioQueueErr_BufferEnqueuedTwice`: the buffer is already enqueued.
        case bufferEnqueuedTwice = -66666
        /// `kAudioQueueErr_EnqueueDuringReset`: buffers cannot be enqueued while the queue resets.
        case enqueueDuringReset = -66632
        /// `kAudioQueueErr_InvalidOfflineMode`: the operation needs (or forbids) offline rendering.
        case invalidOfflineMode = -66626
        /// `kAudioFormatUnsupportedDataFormatError` (`'fmt?'`): the stream format is not supported.
        case unsupportedFormat = 1718449215

        /// The Audio Queue constant's name, such as `kAudioQueueErr_InvalidBuffer`.
        public var description: String {
            switch self {
            case .invalidBuffer: "kAudioQueueErr_InvalidBuffer"
            case .bufferEmpty: "kAudioQueueErr_BufferEmpty"
            case .disposalPending: "kAudioQueueErr_DisposalPending"
            case .invalidProperty: "kAudioQueueErr_InvalidProperty"
            case .invalidPropertySize: "kAudioQueueErr_InvalidPropertySize"
            case .invalidParameter: "kAudioQueueErr_InvalidParameter"
            case .cannotStart: "kAudioQueueErr_CannotStart"
            case .invalidDevice: "kAudioQueueErr_InvalidDevice"
            case .bufferInQueue: "kAudioQueueErr_BufferInQueue"
            case .invalidRunState: "kAudioQueueErr_InvalidRunState"
            case .invalidQueueType: "kAudioQueueErr_InvalidQueueType"
            case .bufferEnqueuedTwice: "kAudioQueueErr_BufferEnqueuedTwice"
            case .enqueueDuringReset: "kAudioQueueErr_EnqueueDuringReset"
            case .invalidOfflineMode: "kAudioQueueErr_InvalidOfflineMode"
            case .unsupportedFormat: "kAudioFormatUnsupportedDataFormatError"
            }
        }
    }

    /// The Audio Queue result code.
    public var code: Code
    /// What went wrong and what to do, in words.
    public var message: String

    /// Creates an error with a result code and an explanation.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The numeric `OSStatus` value Apple's API returns for this error.
    public var osStatus: Int32 { code.rawValue }

    /// The message followed by the result code, for example
    /// `buffer is enqueued; wait for its callback before freeing it (kAudioQueueErr_BufferInQueue, -66679)`.
    public var description: String { "\(message) (\(code), \(code.rawValue))" }
}
