/// The error every Lockstep queue, engine and device operation throws.
///
/// Each error carries an Audio Queue result code (``Code``, whose raw values are Apple's
/// `OSStatus` values, so ported code can compare them) and a sentence that says what went wrong
/// and what to do about it.
public struct AudioQueueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An Audio Queue result code: an `OSStatus` with Apple's numeric value.
    ///
    /// Like swift-system's `Errno`, a `RawRepresentable` struct with named constants rather than
    /// an enum, so any status survives — the codes of Apple's other services that the
    /// compatibility layer returns (`kAudio_ParamError`, Audio File errors) included — and
    /// compares by value.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The `OSStatus` value.
        public let rawValue: Int32

        /// The code with the `OSStatus` value `rawValue` (named or not).
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// `kAudioQueueErr_InvalidBuffer`: the buffer does not belong to this queue.
        public static let invalidBuffer = Code(rawValue: -66687)
        /// `kAudioQueueErr_BufferEmpty`: the buffer holds no audio (byte size 0).
        public static let bufferEmpty = Code(rawValue: -66686)
        /// `kAudioQueueErr_DisposalPending`: the queue is being disposed of.
        public static let disposalPending = Code(rawValue: -66685)
        /// `kAudioQueueErr_InvalidProperty`: the property is not valid for this object.
        public static let invalidProperty = Code(rawValue: -66684)
        /// `kAudioQueueErr_InvalidPropertySize`: the property value has the wrong size.
        public static let invalidPropertySize = Code(rawValue: -66683)
        /// `kAudioQueueErr_InvalidParameter`: the parameter ID or value is invalid.
        public static let invalidParameter = Code(rawValue: -66682)
        /// `kAudioQueueErr_CannotStart`: the queue or device cannot start.
        public static let cannotStart = Code(rawValue: -66681)
        /// `kAudioQueueErr_InvalidDevice`: the device is missing, stopped or unusable.
        public static let invalidDevice = Code(rawValue: -66680)
        /// `kAudioQueueErr_BufferInQueue`: the buffer cannot be freed while it is enqueued.
        public static let bufferInQueue = Code(rawValue: -66679)
        /// `kAudioQueueErr_InvalidRunState`: the operation is not allowed in the queue's run state.
        public static let invalidRunState = Code(rawValue: -66678)
        /// `kAudioQueueErr_InvalidQueueType`: the operation needs an output (or input) queue.
        public static let invalidQueueType = Code(rawValue: -66677)
        /// `kAudioQueueErr_BufferEnqueuedTwice`: the buffer is already enqueued.
        public static let bufferEnqueuedTwice = Code(rawValue: -66666)
        /// `kAudioQueueErr_EnqueueDuringReset`: buffers cannot be enqueued while the queue resets.
        public static let enqueueDuringReset = Code(rawValue: -66632)
        /// `kAudioQueueErr_InvalidOfflineMode`: the operation needs (or forbids) offline rendering.
        public static let invalidOfflineMode = Code(rawValue: -66626)
        /// `kAudioFormatUnsupportedDataFormatError` (`'fmt?'`): the stream format is not supported.
        public static let unsupportedFormat = Code(rawValue: 1718449215)

        /// Every code Lockstep itself returns.
        public static let allCases: [Code] = [
            .invalidBuffer,
            .bufferEmpty,
            .disposalPending,
            .invalidProperty,
            .invalidPropertySize,
            .invalidParameter,
            .cannotStart,
            .invalidDevice,
            .bufferInQueue,
            .invalidRunState,
            .invalidQueueType,
            .bufferEnqueuedTwice,
            .enqueueDuringReset,
            .invalidOfflineMode,
            .unsupportedFormat,
        ]

        private static let names: [Int32: String] = [
            -66687: "kAudioQueueErr_InvalidBuffer",
            -66686: "kAudioQueueErr_BufferEmpty",
            -66685: "kAudioQueueErr_DisposalPending",
            -66684: "kAudioQueueErr_InvalidProperty",
            -66683: "kAudioQueueErr_InvalidPropertySize",
            -66682: "kAudioQueueErr_InvalidParameter",
            -66681: "kAudioQueueErr_CannotStart",
            -66680: "kAudioQueueErr_InvalidDevice",
            -66679: "kAudioQueueErr_BufferInQueue",
            -66678: "kAudioQueueErr_InvalidRunState",
            -66677: "kAudioQueueErr_InvalidQueueType",
            -66666: "kAudioQueueErr_BufferEnqueuedTwice",
            -66632: "kAudioQueueErr_EnqueueDuringReset",
            -66626: "kAudioQueueErr_InvalidOfflineMode",
            1718449215: "kAudioFormatUnsupportedDataFormatError",
        ]

        /// The Audio Queue constant's name, such as `kAudioQueueErr_InvalidBuffer`, or
        /// `OSStatus N` for a code Lockstep has no name for.
        public var description: String { Self.names[rawValue] ?? "OSStatus \(rawValue)" }
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

    /// Creates an error with a raw `OSStatus` (any value) and an explanation.
    public init(_ status: Int32, _ message: String) {
        self.init(Code(rawValue: status), message)
    }

    /// The numeric `OSStatus` value Apple's API returns for this error.
    public var osStatus: Int32 { code.rawValue }

    /// The message followed by the result code, for example
    /// `buffer is enqueued; wait for its callback before freeing it (kAudioQueueErr_BufferInQueue, -66679)`.
    public var description: String { "\(message) (\(code), \(code.rawValue))" }
}
