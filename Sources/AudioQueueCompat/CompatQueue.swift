import Foundation
import Lockstep
import Synchronization

/// The object behind an ``AudioQueueRef``: Apple's queue semantics on one Lockstep
/// ``OutputQueue`` or ``InputQueue``.
///
/// **Binding.** A new queue holds its buffers and enqueued buffers itself; it is *bound* to an
/// engine queue only when something needs the device — start, prime, offline render, the time and
/// device functions. Then it joins the shared engine of the default device, or, in offline mode
/// (``AudioQueueSetOfflineRenderFormat(_:_:_:)``), a private engine on an ``OfflineDevice``; the
/// buffers enqueued so far are handed over in order. So Apple's offline pattern — enqueue, then
/// set the offline format, then start — works, and needs no JACK server.
///
/// **Buffers.** `mAudioData` is memory of this layer; on enqueue its bytes are copied (byte-swapped
/// for big-endian formats) into the engine buffer, on the enqueuing thread, and recorded audio is
/// copied back on the callback thread — never on the realtime thread. An input queue at another
/// rate than the device's records through an ``InputRateConversion``.
///
/// Locking: `state` (a `Mutex`) holds every mutable field; it is never held while calling user
/// code, rendering, or waiting. Its extensions, one per concern, live in the `CompatQueue…` files:
/// binding, buffers, output and input callbacks, run state, parameters and properties,
/// listeners, time, offline rendering.
///
/// `@unchecked Sendable`: the immutable fields hold the caller's C pointers and blocks (user
/// data, callbacks), which Apple's API lets any thread use; everything mutable is in `state`.
final class CompatQueue: @unchecked Sendable {
    /// The user's callback: a C function called on the callback thread, or a block run on a
    /// dispatch queue.
    enum Callback {
        case output(AudioQueueOutputCallback)
        case input(AudioQueueInputCallback)
        case outputBlock(AudioQueueOutputCallbackBlock, any CallbackDispatchQueue)
        case inputBlock(AudioQueueInputCallbackBlock, any CallbackDispatchQueue)
    }

    /// Where disposal stands: not asked for, waiting for an asynchronous stop, or over.
    enum Disposal { case none, pending, done }

    /// The default `kAudioQueueProperty_DecodeBufferSizeFrames`.
    static let defaultDecodeBufferFrames = 8192

    /// An engine buffer of an output queue in the engine queue: its frame count and the queue's
    /// buffer whose audio it carries, until that buffer is handed back to the callback.
    struct InFlight {
        var engineBuffer: QueueBuffer
        var frames: Int
        var buffer: AudioQueueBufferRef?
        /// The queue sample time at which its audio ends.
        var end: Int64 = 0
    }

    /// One enqueued buffer with what came with it, kept in order while the queue is unbound (and,
    /// while bound, until the engine hands the buffer back).
    struct Enqueue {
        var buffer: AudioQueueBufferRef
        var startTime: Int64?
        var trimStart: Int
        var trimEnd: Int
        /// Parameter events (Volume, Pan, VolumeRampTime) applied when the buffer starts.
        var parameters: [ParameterEvent]
        /// The buffer's packets decoded (32-bit float, interleaved), for a queue of a compressed format.
        var decoded: [Float]? = nil

        /// The frames of PCM it carries.
        func frames(_ layout: LinearPCMLayout) -> Int {
            decoded.map { $0.count / layout.format.channelCount } ?? Int(buffer.pointee.mAudioDataByteSize) / layout.bytesPerFrame
        }
    }

    /// The queue's mutable fields, guarded by ``CompatQueue/state``. Methods of the queue that
    /// take it `inout` are called with the mutex held.
    ///
    /// `@unchecked Sendable`: it holds C pointers (the queue's buffers, listeners' user data) and
    /// objects that are not `Sendable` (``BufferRecord``, ``InputRateConversion``), which the
    /// enqueuing thread and the callback thread both use — only ever through the mutex.
    struct State: @unchecked Sendable {
        var buffers: [AudioQueueBufferRef: BufferRecord] = [:]
        /// Enqueued buffers in order (in the engine queue while bound).
        var enqueued: [Enqueue] = []
        /// The queue time (frames) at which the audio enqueued so far ends, while unbound.
        var pendingEnd: Int64 = 0
        var engine: Engine?
        var output: OutputQueue?
        var input: InputQueue?
        var offlineDevice: OfflineDevice?
        /// The device sample at which the output queue last stopped (offline: where a render that
        /// saw it stop ends its audio).
        var outputStoppedAt: Int64?
        var offlineLayout: LinearPCMLayout?
        /// Parameter values set while unbound (Volume, VolumeRampTime, Pan), applied at binding.
        var parameters: [QueueParameter: Float] = [:]
        var metering = false
        var magicCookie: [UInt8] = []
        /// The decoder of a queue of a compressed format, made at the first enqueue (with the
        /// cookie set by then) and made again when the cookie changes.
        var decoder: PacketDecoder?
        var channelLayout: [UInt8]?
        var listeners: [Listener] = []
        var disposal = Disposal.none
        var startPending = false
        /// A start "as soon as possible" waiting for the callbacks on the starting thread's run
        /// loop to decode two periods ahead (``CompatQueue/startIfDecodedAhead(force:)``).
        var deferredStart = false

        /// Drops a deferred start that has not happened (a stop or pause came first).
        mutating func cancelDeferredStart() {
            guard deferredStart else { return }
            deferredStart = false
            startPending = false
        }
        /// An asynchronous stop asked for before the queue started: applied when it starts, so the
        /// buffers enqueued by then play out first (Apple's priming loops stop short files this way).
        var stopWhenDrained = false
        /// Playback buffers a reset (``reset()``, an immediate stop) is handing back; until they are
        /// all back, enqueueing returns `kAudioQueueErr_EnqueueDuringReset`, as on Apple.
        var resetting: Set<AudioQueueBufferRef> = []
        var timelines: [AudioQueueTimelineRef: Timeline] = [:]
        var inputOrigin: Int64?
        /// Output callbacks running now (a synchronous stop waits for them).
        var outputCallbacksRunning = 0
        /// Output callbacks posted to ``callbackRunLoop`` that have not run yet.
        var outputCallbacksPosted = 0
        /// Set while an input queue records at a rate other than the device's, or into a
        /// compressed format.
        var conversion: InputRateConversion?
        /// The encoder of an input queue of a compressed format, made with the queue (its magic
        /// cookie is there before recording starts, as on Apple).
        var encoding: InputPacketEncoding?
        /// Engine buffers recorded at the device rate, with their frame counts, waiting to be
        /// converted into the queue's buffers (an input queue with a ``conversion``); handed back to
        /// the engine queue once converted.
        var recorded: [(QueueBuffer, Int)] = []
        /// Input callbacks on a dispatch queue that have not returned yet.
        var inputCallbacksRunning = 0
        /// `kAudioQueueProperty_DecodeBufferSizeFrames`: how many frames an output queue holds
        /// converted ahead of the device before it stops handing buffers back early.
        var decodeBufferFrames = CompatQueue.defaultDecodeBufferFrames
        /// Engine buffers of an output queue in the engine queue, oldest first, each with the
        /// queue's buffer it carries while that one has not been handed back yet.
        var inFlight: [InFlight] = []
        /// Engine buffers of an output queue that are free to carry the next enqueue.
        var spare: [QueueBuffer] = []
        /// The engine's discontinuity handler that calls the sample-rate listeners, while bound.
        var rateHandler: Int?
        /// `kAudioQueueProperty_TimePitchAlgorithm` (stored; time-pitch is not provided).
        var timePitchAlgorithm = kAudioQueueTimePitchAlgorithm_Spectral
        /// `kAudioQueueProperty_TimePitchBypass` (stored).
        var timePitchBypass: UInt32 = 0
        /// `kAudioQueueProperty_HardwareCodecPolicy`.
        var hardwareCodecPolicy = kAudioQueueHardwareCodecPolicy_Default
        /// The device UID handed out in `kAudioQueueProperty_ChannelAssignments` (Apple's "get"
        /// rule: not retained for the caller, so the queue keeps it alive).
        var assignmentUID: CFString?
        /// Whether the queue is still a source of its callback run loop.
        var runLoopSource = false

        var isBound: Bool { output != nil || input != nil }

        /// Throws `kAudioQueueErr_DisposalPending` once the queue is being (or has been) disposed of.
        func checkDisposal() throws(AudioQueueError) {
            if disposal != .none {
                throw AudioQueueError(.disposalPending, "the queue is being disposed of (or was); create a new queue")
            }
        }
    }

    let callback: Callback
    let userData: UnsafeMutableRawPointer?
    /// The run loop (and mode) the C callbacks and listeners are posted to, or nil: they run on
    /// the callback thread. The queue is a source of that run loop until it is disposed of.
    let callbackRunLoop: (CFRunLoop, CFString?)?
    /// The PCM the engine plays: the queue's format, or what its compressed format decodes to.
    let layout: LinearPCMLayout
    /// The queue's compressed format (decoded at enqueue), or nil for linear PCM.
    let compressed: CompressedFormat?
    var isOutput: Bool {
        switch callback {
        case .output, .outputBlock: true
        case .input, .inputBlock: false
        }
    }
    var ref: AudioQueueRef { QueueRegistry.handle(self) }

    let state = Mutex(State())
    /// Held across the enqueue of a buffer of a compressed format (taken before ``state``): packets
    /// are decoded in the order they are enqueued, and the decoder is reset or replaced only
    /// between decodes, while ``state`` stays free during a decode.
    let decodeOrder = Mutex(())

    init(format: LinearPCMLayout, compressed: CompressedFormat? = nil, callback: Callback, userData: UnsafeMutableRawPointer?,
         runLoop: (CFRunLoop, CFString?)? = nil) {
        layout = format
        self.compressed = compressed
        self.callback = callback
        self.userData = userData
        callbackRunLoop = runLoop
        if let (loop, mode) = runLoop {
            loop.addSource(mode: mode)
            state.withLock { $0.runLoopSource = true }
        }
    }

    /// Stops being a source of the callback run loop (once; at disposal).
    func detachRunLoopSource() {
        guard let (loop, mode) = callbackRunLoop,
              state.withLock({ state in defer { state.runLoopSource = false }; return state.runLoopSource }) else { return }
        loop.removeSource(mode: mode)
    }

    deinit {
        state.withLock { state in
            for record in state.buffers.values { Self.deallocate(record.ref) }
        }
    }

    func requireOutput(_ function: String) throws(AudioQueueError) {
        guard isOutput else {
            throw AudioQueueError(.invalidQueueType, "\(function) works on output (playback) queues only; this is an input queue")
        }
    }
}
