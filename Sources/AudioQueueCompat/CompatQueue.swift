import Foundation
import Lockstep
import LockstepFiles

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
/// Locking: `lock` guards the fields below; it is never held while calling user code, rendering,
/// or waiting.
final class CompatQueue: @unchecked Sendable {
    enum Callback {
        case output(AudioQueueOutputCallback)
        case input(AudioQueueInputCallback)
        case outputBlock(AudioQueueOutputCallbackBlock, DispatchQueue)
        case inputBlock(AudioQueueInputCallbackBlock, DispatchQueue)
    }

    enum Disposal { case none, pending, done }

    final class BufferRecord {
        let ref: AudioQueueBufferRef
        var engineBuffer: QueueBuffer?
        var isEnqueued = false
        init(ref: AudioQueueBufferRef) { self.ref = ref }
    }

    struct Enqueue {
        var buffer: AudioQueueBufferRef
        var startTime: Int64?
        var trimStart: Int
        var trimEnd: Int
        var volume: Float?
    }

    struct Listener {
        var id: AudioQueuePropertyID
        var proc: AudioQueuePropertyListenerProc
        var userData: UnsafeMutableRawPointer?

        func matches(_ id: AudioQueuePropertyID, _ proc: AudioQueuePropertyListenerProc,
                     _ userData: UnsafeMutableRawPointer?) -> Bool {
            self.id == id && self.userData == userData
                && unsafeBitCast(self.proc, to: UnsafeRawPointer.self) == unsafeBitCast(proc, to: UnsafeRawPointer.self)
        }
    }

    let callback: Callback
    let userData: UnsafeMutableRawPointer?
    let layout: LinearPCMLayout
    var isOutput: Bool {
        switch callback {
        case .output, .outputBlock: true
        case .input, .inputBlock: false
        }
    }
    var ref: AudioQueueRef { QueueRegistry.handle(self) }

    private let lock = NSLockLite()
    private var buffers: [AudioQueueBufferRef: BufferRecord] = [:]
    /// Enqueued buffers in order (in the engine queue while bound).
    private var enqueued: [Enqueue] = []
    /// The queue time (frames) at which the audio enqueued so far ends, while unbound.
    private var pendingEnd: Int64 = 0
    private var engine: Engine?
    private var output: OutputQueue?
    private var input: InputQueue?
    private var offlineDevice: OfflineDevice?
    private var offlineLayout: LinearPCMLayout?
    private var volume: Float = 1
    private var metering = false
    private var magicCookie: [UInt8] = []
    private var channelLayout: [UInt8]?
    private var listeners: [Listener] = []
    private var disposal = Disposal.none
    private var startPending = false
    /// An asynchronous stop asked for before the queue started: applied when it starts, so the
    /// buffers enqueued by then play out first (Apple's priming loops stop short files this way).
    private var stopWhenDrained = false
    /// Playback buffers a reset (``reset()``, an immediate stop) is handing back; until they are
    /// all back, enqueueing returns `kAudioQueueErr_EnqueueDuringReset`, as on Apple.
    private var resetting: Set<AudioQueueBufferRef> = []
    private var timelines: [AudioQueueTimelineRef: Timeline] = [:]
    private var inputOrigin: Int64?
    /// Output callbacks running now (a synchronous stop waits for them).
    private var outputCallbacksRunning = 0
    /// Set while an input queue records at a rate other than the device's.
    private var conversion: InputRateConversion?

    init(format: LinearPCMLayout, callback: Callback, userData: UnsafeMutableRawPointer?) {
        layout = format
        self.callback = callback
        self.userData = userData
    }

    deinit {
        for record in buffers.values { Self.deallocate(record.ref) }
    }

    private static func deallocate(_ ref: AudioQueueBufferRef) {
        ref.pointee.mAudioData.deallocate()
        ref.pointee.mPacketDescriptions?.deallocate()
        ref.deinitialize(count: 1)
        ref.deallocate()
    }

    private var isBound: Bool { output != nil || input != nil }

    private func checkDisposal() throws(CompatError) {
        if disposal != .none {
            throw CompatError(.disposalPending, "the queue is being disposed of (or was); create a new queue")
        }
    }

    private func requireOutput(_ function: String) throws(CompatError) {
        guard isOutput else {
            throw CompatError(.invalidQueueType, "\(function) works on output (playback) queues only; this is an input queue")
        }
    }

    // MARK: - Binding

    /// Binds to an engine queue if not bound yet. Called with `lock` held.
    private func bindLocked() throws(CompatError) {
        if isBound { return }
        let engine: Engine
        if let offlineLayout {
            let (offlineEngine, device) = try core { () throws(AudioQueueError) in try makeOfflineEngine(offlineLayout) }
            engine = offlineEngine
            offlineDevice = device
        } else {
            engine = try core { () throws(AudioQueueError) in try DefaultDevice.shared.engine() }
        }
        if isOutput {
            let queue = try core { () throws(AudioQueueError) in
                try engine.makeOutputQueue(format: layout.format) { [self] _, buffer in outputDone(buffer) }
            }
            _ = try core { () throws(AudioQueueError) in
                try queue.addPropertyListener(.isRunning) { [self] queue, _ in runningChanged(queue.isRunning) }
            }
            try core { () throws(AudioQueueError) in try queue.setVolume(volume) }
            queue.isLevelMeteringEnabled = metering
            output = queue
        } else {
            guard engine.device.inputChannelCount >= layout.format.channelCount else {
                throw CompatError(.invalidDevice,
                    "the device '\(engine.device.name)' has \(engine.device.inputChannelCount) inputs but the queue records \(layout.format.channelCount) channels; choose a device with more inputs (AudioQueueSetDefaultDevice)")
            }
            let queue: InputQueue
            if layout.format.sampleRate != engine.sampleRate {
                let conversion = try InputRateConversion(layout: layout, deviceRate: engine.sampleRate,
                                                         factory: engine.rateConverterFactory ?? SoxrRateConverter.factory)
                queue = try core { () throws(AudioQueueError) in
                    try engine.makeInputQueue(format: conversion.internalFormat) { [self] _, buffer, start, frames in
                        convertedInput(buffer, start: start, frames: frames)
                    }
                }
                for _ in 0..<8 {
                    try core { () throws(AudioQueueError) in
                        try queue.enqueue(try queue.allocateBuffer(frameCapacity: conversion.internalBufferFrames))
                    }
                }
                self.conversion = conversion
            } else {
                queue = try core { () throws(AudioQueueError) in
                    try engine.makeInputQueue(format: layout.format) { [self] _, buffer, start, frames in
                        inputFilled(buffer, start: start, frames: frames)
                    }
                }
            }
            _ = try core { () throws(AudioQueueError) in
                try queue.addPropertyListener(.isRunning) { [self] queue, _ in runningChanged(queue.isRunning) }
            }
            queue.addEventHandler { [self] _, event in
                if case .started(let time) = event { lock.locked { if inputOrigin == nil { inputOrigin = time } } }
            }
            queue.isLevelMeteringEnabled = metering
            input = queue
        }
        self.engine = engine
        for record in buffers.values { try attachEngineBuffer(record) }
        let replay = enqueued
        for (index, item) in replay.enumerated() {
            do {
                _ = try submitLocked(item)
            } catch {
                // The rest stay with the caller: hand them back as not enqueued.
                for rest in replay[index...] { buffers[rest.buffer]?.isEnqueued = false }
                enqueued.removeLast(replay.count - index)
                throw error
            }
        }
    }

    /// Lets go of the engine queue (disposing of it at once, no callbacks); enqueued buffers go
    /// back to pending. Called with `lock` held.
    private func unbindLocked() {
        dropEngineQueueLocked()
        for record in buffers.values { record.engineBuffer = nil }
        pendingEnd = 0
        for item in enqueued {
            let frames = Int64(item.buffer.pointee.mAudioDataByteSize) / Int64(layout.bytesPerFrame)
            pendingEnd = (item.startTime ?? pendingEnd) + frames - Int64(item.trimStart + item.trimEnd)
        }
    }

    private func attachEngineBuffer(_ record: BufferRecord) throws(CompatError) {
        if conversion != nil { return }      // the queue's buffers are filled by the conversion
        let capacity = max(Int(record.ref.pointee.mAudioDataBytesCapacity), layout.bytesPerFrame)
        let buffer: QueueBuffer
        if let output {
            buffer = try core { () throws(AudioQueueError) in try output.allocateBuffer(byteCapacity: capacity) }
        } else if let input {
            buffer = try core { () throws(AudioQueueError) in try input.allocateBuffer(byteCapacity: capacity) }
        } else { return }
        buffer.userData = UnsafeMutableRawPointer(record.ref)
        record.engineBuffer = buffer
    }

    /// Hands one enqueued buffer to the engine queue. Called with `lock` held, while bound.
    private func submitLocked(_ item: Enqueue) throws(CompatError) -> Int64 {
        if conversion != nil { return 0 }    // stays in `enqueued` until the conversion fills it
        guard let record = buffers[item.buffer], let engineBuffer = record.engineBuffer else {
            throw CompatError(.invalidBuffer, "the buffer does not belong to this queue")
        }
        if let input {
            try core { () throws(AudioQueueError) in try input.enqueue(engineBuffer) }
            return 0
        }
        guard let output else { return 0 }
        let bytes = Int(item.buffer.pointee.mAudioDataByteSize)
        layout.convertByteOrder(from: item.buffer.pointee.mAudioData, to: engineBuffer.data, byteCount: bytes)
        engineBuffer.byteSize = bytes
        let parameters = item.volume.map { [ParameterEvent(.volume, $0)] } ?? []
        return try core { () throws(AudioQueueError) in
            try output.enqueue(engineBuffer, startTime: item.startTime, trimFramesAtStart: item.trimStart,
                               trimFramesAtEnd: item.trimEnd, parameters: parameters)
        }
    }

    // MARK: - Callbacks from the engine (callback thread, or the offline render thread)

    private func takeBack(_ engineBuffer: QueueBuffer) -> AudioQueueBufferRef? {
        guard let raw = engineBuffer.userData else { return nil }
        let ref = raw.assumingMemoryBound(to: AudioQueueBuffer.self)
        return lock.locked {
            guard disposal != .done, let record = buffers[ref] else { return nil }
            record.isEnqueued = false
            if let index = enqueued.firstIndex(where: { $0.buffer == ref }) { enqueued.remove(at: index) }
            return ref
        }
    }

    private func outputDone(_ engineBuffer: QueueBuffer) {
        guard let ref = takeBack(engineBuffer) else { return }
        lock.locked { outputCallbacksRunning += 1 }
        deliverOutput([ref])
        // A reset is over once the callback of its last buffer has run.
        lock.locked {
            resetting.remove(ref)
            outputCallbacksRunning -= 1
        }
    }

    /// Hands buffers to the output callback: the C function on this thread, or the block on its
    /// dispatch queue (synchronously for an offline device, as the core does).
    private func deliverOutput(_ refs: [AudioQueueBufferRef]) {
        let queue = ref
        switch callback {
        case .output(let proc):
            CallbackThread.run { for buffer in refs { proc(userData, queue, buffer) } }
        case .outputBlock(let block, let dispatch):
            let delivery = Unchecked(BlockDelivery(queue: queue) { queue in for buffer in refs { block(queue, buffer) } })
            onDispatchQueue(dispatch) { delivery.value.run() }
        case .input, .inputBlock:
            break
        }
    }

    private func onDispatchQueue(_ dispatch: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        if lock.locked({ engine?.device.isOffline ?? false }) {
            dispatch.sync { CallbackThread.run(work) }
        } else {
            dispatch.async { CallbackThread.run(work) }
        }
    }

    private func inputFilled(_ engineBuffer: QueueBuffer, start: Int64, frames: Int) {
        guard let ref = takeBack(engineBuffer) else { return }
        let (origin, engine) = lock.locked { (inputOrigin ?? start, self.engine) }
        let bytes = min(frames * layout.bytesPerFrame, Int(ref.pointee.mAudioDataBytesCapacity))
        layout.convertByteOrder(from: engineBuffer.data, to: ref.pointee.mAudioData, byteCount: bytes)
        ref.pointee.mAudioDataByteSize = UInt32(bytes)
        deliverInput(ref, sampleTime: start - origin, hostTime: engine?.hostTime(forSampleTime: start) ?? 0,
                     packets: UInt32(bytes / layout.bytesPerFrame))
    }

    /// A recorded engine buffer at the device rate, for a queue at another rate: convert it, hand
    /// it back to the engine, and deliver every buffer of the queue that is now full.
    private func convertedInput(_ engineBuffer: QueueBuffer, start: Int64, frames: Int) {
        let (input, filled) = lock.locked { () -> (InputQueue?, [(AudioQueueBufferRef, Int64, Int)]) in
            guard disposal != .done, let conversion else { return (nil, []) }
            engineBuffer.withFloatSamples { conversion.append($0.baseAddress!, frames: frames) }
            return (self.input, fillConvertedLocked(final: false))
        }
        try? input?.enqueue(engineBuffer)
        deliverConverted(filled)
    }

    /// Fills the queue's enqueued buffers, in order, from the converted audio. Called with `lock` held.
    private func fillConvertedLocked(final: Bool) -> [(AudioQueueBufferRef, Int64, Int)] {
        guard let conversion else { return [] }
        var filled: [(AudioQueueBufferRef, Int64, Int)] = []
        while let item = enqueued.first, let (time, frames) = conversion.fill(item.buffer, final: final) {
            enqueued.removeFirst()
            buffers[item.buffer]?.isEnqueued = false
            filled.append((item.buffer, time, frames))
        }
        return filled
    }

    private func deliverConverted(_ filled: [(AudioQueueBufferRef, Int64, Int)]) {
        let (engine, origin, ratio) = lock.locked { (self.engine, inputOrigin ?? 0, conversion?.deviceFramesPerFrame ?? 1) }
        for (ref, time, frames) in filled {
            let device = origin + Int64((Double(time) * ratio).rounded())
            deliverInput(ref, sampleTime: time, hostTime: engine?.hostTime(forSampleTime: device) ?? 0, packets: UInt32(frames))
        }
    }

    /// Calls the input callback (or block) with a filled buffer.
    private func deliverInput(_ ref: AudioQueueBufferRef, sampleTime: Int64, hostTime: UInt64, packets: UInt32) {
        var time = AudioTimeStamp()
        time.mSampleTime = Double(sampleTime)
        time.mHostTime = hostTime
        time.mRateScalar = 1
        time.mFlags = kAudioTimeStampSampleHostTimeValid | kAudioTimeStampRateScalarValid
        let queue = self.ref
        switch callback {
        case .input(let proc):
            CallbackThread.run { withUnsafePointer(to: &time) { proc(userData, queue, ref, $0, packets, nil) } }
        case .inputBlock(let block, let dispatch):
            let stamp = time
            let delivery = Unchecked(BlockDelivery(queue: queue) { queue in
                var time = stamp
                withUnsafePointer(to: &time) { block(queue, ref, $0, packets, nil) }
            })
            onDispatchQueue(dispatch) { delivery.value.run() }
        case .output, .outputBlock:
            break
        }
    }

    private func runningChanged(_ running: Bool) {
        let (targets, finish, tail) = lock.locked { () -> ([Listener], Bool, [(AudioQueueBufferRef, Int64, Int)]) in
            if running { startPending = false }
            let finish = !running && disposal == .pending
            var tail: [(AudioQueueBufferRef, Int64, Int)] = []
            if !running, let conversion, disposal != .done {
                // The recording ended: the converter's tail goes into the last (partial) buffer.
                conversion.flush()
                tail = fillConvertedLocked(final: true)
            }
            return (listeners.filter { $0.id == kAudioQueueProperty_IsRunning }, finish, tail)
        }
        deliverConverted(tail)
        // Only now may a synchronous stop return: the last buffer's callback has run.
        if !running { lock.locked { conversion?.flushing = false } }
        notify(targets, kAudioQueueProperty_IsRunning)
        if finish { finishDisposal() }
    }

    private func notify(_ targets: [Listener], _ id: AudioQueuePropertyID) {
        let queue = ref
        CallbackThread.run { for listener in targets { listener.proc(listener.userData, queue, id) } }
    }

    private func notifyListeners(_ id: AudioQueuePropertyID) {
        notify(lock.locked { listeners.filter { $0.id == id } }, id)
    }

    // MARK: - Buffers

    func allocateBuffer(byteSize: UInt32, packetDescriptions: UInt32) throws(CompatError) -> AudioQueueBufferRef {
        guard byteSize <= 1 << 30 else {
            throw CompatError(.invalidParameter, "buffer size \(byteSize) bytes is out of range; allocate at most 1 GiB")
        }
        guard packetDescriptions <= 1 << 20 else {
            throw CompatError(.invalidParameter, "\(packetDescriptions) packet descriptions are too many; linear PCM needs none")
        }
        return try lock.locked { () throws(CompatError) -> AudioQueueBufferRef in
            try checkDisposal()
            let data = UnsafeMutableRawPointer.allocate(byteCount: max(Int(byteSize), 1), alignment: 16)
            data.initializeMemory(as: UInt8.self, repeating: 0, count: max(Int(byteSize), 1))
            var descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?
            if packetDescriptions > 0 {
                descriptions = .allocate(capacity: Int(packetDescriptions))
                descriptions?.initialize(repeating: AudioStreamPacketDescription(), count: Int(packetDescriptions))
            }
            let ref = AudioQueueBufferRef.allocate(capacity: 1)
            ref.initialize(to: AudioQueueBuffer(mAudioDataBytesCapacity: byteSize, mAudioData: data, mAudioDataByteSize: 0,
                                                mUserData: nil, mPacketDescriptionCapacity: packetDescriptions,
                                                mPacketDescriptions: descriptions, mPacketDescriptionCount: 0))
            let record = BufferRecord(ref: ref)
            do throws(CompatError) {
                try attachEngineBuffer(record)
            } catch {
                Self.deallocate(ref)
                throw error
            }
            buffers[ref] = record
            return ref
        }
    }

    func freeBuffer(_ ref: AudioQueueBufferRef) throws(CompatError) {
        try lock.locked { () throws(CompatError) in
            try checkDisposal()
            guard let record = buffers[ref] else {
                throw CompatError(.invalidBuffer, "the buffer does not belong to this queue (or was freed)")
            }
            guard !record.isEnqueued else {
                throw CompatError(.bufferInQueue, "the buffer is enqueued; free it after the queue hands it back (its callback), or after AudioQueueStop/AudioQueueReset")
            }
            if let engineBuffer = record.engineBuffer {
                try core { () throws(AudioQueueError) in
                    if let output { try output.freeBuffer(engineBuffer) } else if let input { try input.freeBuffer(engineBuffer) }
                }
            }
            buffers[ref] = nil
            Self.deallocate(ref)
        }
    }

    /// Enqueues a buffer; returns the queue time at which it starts playing (output queues).
    func enqueue(_ ref: AudioQueueBufferRef, startTime: AudioTimeStamp?, trimStart: UInt32, trimEnd: UInt32,
                 parameters: [AudioQueueParameterEvent], withParameters: Bool) throws(CompatError) -> Int64 {
        try lock.locked { () throws(CompatError) -> Int64 in
            try checkDisposal()
            guard let record = buffers[ref] else {
                throw CompatError(.invalidBuffer, "the buffer does not belong to this queue (or was freed); enqueue buffers the queue allocated")
            }
            if withParameters && !isOutput {
                throw CompatError(.invalidQueueType, "AudioQueueEnqueueBufferWithParameters is for playback queues; input queues take AudioQueueEnqueueBuffer")
            }
            guard !record.isEnqueued else {
                throw CompatError(.bufferEnqueuedTwice, "the buffer is already enqueued; wait for the callback to hand it back")
            }
            guard resetting.isEmpty else {
                throw CompatError(.enqueueDuringReset, "the queue is being reset (AudioQueueReset or AudioQueueStop(true)) and is still handing back \(resetting.count) buffers; enqueue after the reset")
            }
            guard isOutput else {
                let item = Enqueue(buffer: ref, startTime: nil, trimStart: 0, trimEnd: 0, volume: nil)
                if isBound { _ = try submitLocked(item) }
                enqueued.append(item)
                record.isEnqueued = true
                return 0
            }
            let bytes = Int(ref.pointee.mAudioDataByteSize)
            guard bytes > 0 else {
                throw CompatError(.bufferEmpty, "the buffer holds no audio (mAudioDataByteSize is 0); fill it and set mAudioDataByteSize before enqueueing")
            }
            guard bytes <= Int(ref.pointee.mAudioDataBytesCapacity), bytes % layout.bytesPerFrame == 0 else {
                throw CompatError(.invalidParameter, "mAudioDataByteSize \(bytes) must be a whole number of \(layout.bytesPerFrame)-byte frames within the buffer's \(ref.pointee.mAudioDataBytesCapacity)-byte capacity")
            }
            var volume: Float?
            for event in parameters {
                guard event.mID == kAudioQueueParam_Volume else {
                    throw CompatError(.invalidParameter, "parameter \(event.mID) is not supported; Lockstep queues have kAudioQueueParam_Volume (1)")
                }
                guard event.mValue.isFinite, (0...1).contains(event.mValue) else {
                    throw CompatError(.invalidParameter, "volume \(event.mValue) is out of range; use 0…1")
                }
                volume = event.mValue
            }
            let start = try queueTime(startTime)
            let item = Enqueue(buffer: ref, startTime: start, trimStart: Int(trimStart), trimEnd: Int(trimEnd), volume: volume)
            let actual: Int64
            if isBound {
                actual = try submitLocked(item)
            } else {
                let frames = bytes / layout.bytesPerFrame
                guard Int(trimStart) + Int(trimEnd) < frames else {
                    throw CompatError(.invalidParameter, "trims (\(trimStart) at start, \(trimEnd) at end) must leave at least one of the buffer's \(frames) frames")
                }
                if let start, start < pendingEnd {
                    throw CompatError(.invalidParameter, "start time \(start) is before the end of the previously enqueued audio (\(pendingEnd)); start times must ascend — use a later time or NULL to follow gaplessly")
                }
                actual = start ?? pendingEnd
                pendingEnd = actual + Int64(frames - Int(trimStart) - Int(trimEnd))
            }
            enqueued.append(item)
            record.isEnqueued = true
            return actual
        }
    }

    /// The queue sample time a buffer start time stands for (nil: follow gaplessly).
    private func queueTime(_ stamp: AudioTimeStamp?) throws(CompatError) -> Int64? {
        guard let stamp else { return nil }
        if stamp.mFlags & kAudioTimeStampSampleTimeValid != 0 || stamp.mFlags & kAudioTimeStampHostTimeValid == 0 {
            guard stamp.mSampleTime.isFinite, stamp.mSampleTime >= 0 else {
                throw CompatError(.invalidParameter, "start time \(stamp.mSampleTime) is negative or not a number; queue sample time starts at 0")
            }
            return Int64(stamp.mSampleTime.rounded())
        }
        guard let output, let engine else {
            throw CompatError(.invalidRunState, "a host-time start needs a running queue; give mSampleTime (queue time) instead")
        }
        let device = engine.sampleTime(forHostTime: stamp.mHostTime)
        return max(0, try core { () throws(AudioQueueError) in try output.queueTime(forDeviceSampleTime: device) })
    }

    // MARK: - Run state

    func start(_ stamp: AudioTimeStamp?) throws(CompatError) {
        let (output, input, engine) = try lock.locked { () throws(CompatError) in
            try checkDisposal()
            try bindLocked()
            return (self.output, self.input, self.engine)
        }
        guard let engine else { return }
        var at: Int64?
        if let stamp {
            if stamp.mFlags & kAudioTimeStampSampleTimeValid == 0, stamp.mFlags & kAudioTimeStampHostTimeValid != 0 {
                at = engine.sampleTime(forHostTime: stamp.mHostTime)
            } else {
                guard stamp.mSampleTime.isFinite, stamp.mSampleTime >= 0 else {
                    throw CompatError(.invalidParameter, "start time \(stamp.mSampleTime) is negative or not a number; device sample time starts at 0")
                }
                at = Int64(stamp.mSampleTime.rounded())
            }
        }
        let running = output?.isRunning ?? input?.isRunning ?? false
        if !running { lock.locked { startPending = true } }
        do {
            try core { () throws(AudioQueueError) in
                if let output { try output.start(at: at) } else { try input?.start(at: at) }
            }
        } catch {
            lock.locked { startPending = false }
            throw error
        }
        let drain = lock.locked { () -> Bool in
            defer { stopWhenDrained = false }
            return stopWhenDrained
        }
        if drain {
            try core { () throws(AudioQueueError) in
                if let output { try output.stop(immediately: false) } else { try input?.stop(immediately: false) }
            }
        }
    }

    func pause() throws(CompatError) {
        let (output, input) = try lock.locked { () throws(CompatError) in
            try checkDisposal()
            return (self.output, self.input)
        }
        try core { () throws(AudioQueueError) in
            if let output { try output.pause() } else { try input?.pause() }
        }
    }

    /// Stop and reset share this: an unbound queue hands its buffers back itself.
    private func returnPendingBuffers() {
        let refs: [AudioQueueBufferRef] = lock.locked {
            let refs = enqueued.map(\.buffer)
            for ref in refs { buffers[ref]?.isEnqueued = false }
            enqueued.removeAll()
            pendingEnd = 0
            startPending = false
            stopWhenDrained = false
            if case .output = callback { resetting = Set(refs) }
            return isOutput ? refs : []
        }
        deliverOutput(refs)
        lock.locked { resetting.removeAll() }
    }

    /// Marks the playback buffers enqueued now as being handed back by a reset.
    private func beginReset() {
        lock.locked { if isOutput { resetting = Set(enqueued.map(\.buffer)) } }
    }

    func stop(immediately: Bool) throws(CompatError) {
        let (output, input, engine, deferred) = try lock.locked { () throws(CompatError) in
            try checkDisposal()
            let running = self.output?.isRunning ?? self.input?.isRunning ?? false
            if !immediately && !running && !startPending {
                // Not started yet: stop once it has played what is enqueued by then.
                stopWhenDrained = true
                return (self.output, self.input, self.engine, true)
            }
            stopWhenDrained = false
            if running, let conversion { conversion.flushing = true }
            return (self.output, self.input, self.engine, false)
        }
        if deferred { return }
        guard let engine else { return returnPendingBuffers() }
        if immediately { beginReset() }
        do {
            try core { () throws(AudioQueueError) in
                if let output { try output.stop(immediately: immediately) } else { try input?.stop(immediately: immediately) }
            }
        } catch {
            lock.locked { resetting.removeAll() }
            throw error
        }
        // Apple's synchronous stop: every callback of the stop has run when it returns. An offline
        // device delivers them at its next render; a callback must not wait for itself.
        guard immediately, !engine.device.isOffline, !CallbackThread.isCurrent else { return }
        waitUntil(seconds: 2) {
            let running = output?.isRunning ?? input?.isRunning ?? false
            return lock.locked {
                !running && !startPending && !(conversion?.flushing ?? false)
                    && (input != nil || (enqueued.isEmpty && outputCallbacksRunning == 0))
            }
        }
    }

    private func waitUntil(seconds: Double, _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() && Date() < deadline { usleep(1000) }
    }

    func reset() throws(CompatError) {
        let (output, input) = try lock.locked { () throws(CompatError) in
            try checkDisposal()
            return (self.output, self.input)
        }
        if output == nil && input == nil { return returnPendingBuffers() }
        if let input, lock.locked({ conversion != nil }) { return try resetConversion(input) }
        beginReset()
        do {
            try core { () throws(AudioQueueError) in
                if let output { try output.reset() } else { try input?.reset() }
            }
        } catch {
            lock.locked { resetting.removeAll() }
            throw error
        }
    }

    /// Reset of an input queue that converts: drop what was recorded, hand every buffer back empty.
    private func resetConversion(_ input: InputQueue) throws(CompatError) {
        lock.locked { conversion?.discarding = true }
        defer { lock.locked { conversion?.discarding = false } }
        try core { () throws(AudioQueueError) in try input.reset() }
        let empty = lock.locked { () -> [AudioQueueBufferRef] in
            conversion?.reset()
            let refs = enqueued.map(\.buffer)
            for ref in refs {
                buffers[ref]?.isEnqueued = false
                ref.pointee.mAudioDataByteSize = 0
            }
            enqueued.removeAll()
            return refs
        }
        let time = lock.locked { conversion.map { Int64($0.deliveredFrames) } ?? 0 }
        for ref in empty { deliverInput(ref, sampleTime: time, hostTime: 0, packets: 0) }
    }

    func flush() throws(CompatError) {
        let output = try lock.locked { () throws(CompatError) in
            try checkDisposal()
            return self.output
        }
        try core { () throws(AudioQueueError) in try output?.flush() }
    }

    func prime(frames: UInt32) throws(CompatError) -> UInt32 {
        let output = try lock.locked { () throws(CompatError) in
            try checkDisposal()
            try requireOutput("AudioQueuePrime")
            try bindLocked()
            return self.output
        }
        guard let output else { return 0 }
        let prepared = try core { () throws(AudioQueueError) in try output.prime(frames: Int(frames)) }
        return UInt32(clamping: prepared)
    }

    /// Disposes of the queue. Returns whether the registry should forget it now.
    func dispose(immediately: Bool) throws(CompatError) -> Bool {
        try lock.locked { () throws(CompatError) -> Bool in
            try checkDisposal()
            if !immediately, let output, output.isRunning {
                disposal = .pending
                try core { () throws(AudioQueueError) in try output.dispose(immediately: false) }
                return false
            }
            disposal = .done
            dropEngineQueueLocked()
            listeners.removeAll()
            return true
        }
    }

    private func finishDisposal() {
        lock.locked {
            disposal = .done
            dropEngineQueueLocked()
            listeners.removeAll()
        }
        QueueRegistry.shared.remove(self)
    }

    /// Disposes of the engine queue at once (no more callbacks; a no-op if it is already going)
    /// and forgets it and its engine. That breaks the cycle engine queue → callback → self: the
    /// engine lets go of its queue, and so of self, once the render thread has. Called with `lock` held.
    private func dropEngineQueueLocked() {
        try? output?.dispose(immediately: true)
        try? input?.dispose(immediately: true)
        output = nil
        input = nil
        engine = nil
        offlineDevice = nil
        conversion = nil
        timelines.removeAll()
    }

    // MARK: - Parameters

    func parameter(_ id: AudioQueueParameterID) throws(CompatError) -> Float {
        try lock.locked { () throws(CompatError) -> Float in
            try checkDisposal()
            try requireOutput("AudioQueueGetParameter")
            guard id == kAudioQueueParam_Volume else {
                throw CompatError(.invalidParameter, "parameter \(id) is not supported; Lockstep queues have kAudioQueueParam_Volume (1)")
            }
            return output?.volume ?? volume
        }
    }

    func setParameter(_ id: AudioQueueParameterID, _ value: Float) throws(CompatError) {
        try lock.locked { () throws(CompatError) in
            try checkDisposal()
            try requireOutput("AudioQueueSetParameter")
            guard id == kAudioQueueParam_Volume else {
                throw CompatError(.invalidParameter, "parameter \(id) is not supported; Lockstep queues have kAudioQueueParam_Volume (1)")
            }
            guard value.isFinite, (0...1).contains(value) else {
                throw CompatError(.invalidParameter, "volume \(value) is out of range; use 0…1")
            }
            if let output { try core { () throws(AudioQueueError) in try output.setVolume(value) } }
            volume = value
        }
    }

    // MARK: - Properties

    private static let listenable: Set<AudioQueuePropertyID> = [
        kAudioQueueProperty_IsRunning, kAudioQueueDeviceProperty_SampleRate, kAudioQueueDeviceProperty_NumberChannels,
        kAudioQueueProperty_CurrentDevice, kAudioQueueProperty_MagicCookie, kAudioQueueProperty_StreamDescription,
        kAudioQueueProperty_ChannelLayout, kAudioQueueProperty_EnableLevelMetering,
        kAudioQueueProperty_MaximumOutputPacketSize,
    ]
    private static let meters: Set<AudioQueuePropertyID> = [kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB]

    private func unknownProperty(_ id: AudioQueuePropertyID) -> CompatError {
        CompatError(.invalidProperty, "property '\(fourCharCodeString(id))' is not an audio queue property Lockstep knows")
    }

    /// The device the queue uses or will use: bound engine, offline format, or the default engine.
    private func deviceFacts() throws(CompatError) -> (name: String, rate: Double, channels: Int) {
        let (engine, offline) = lock.locked { (self.engine, offlineLayout) }
        if let offline, engine == nil { return ("offline", offline.format.sampleRate, offline.format.channelCount) }
        let device: Engine
        if let engine { device = engine } else {
            device = try core { () throws(AudioQueueError) in try DefaultDevice.shared.engine() }
        }
        return (device.device.name, device.sampleRate, isOutput ? device.channelCount : device.device.inputChannelCount)
    }

    private var defaultChannelLayout: [UInt8] {
        var value = AudioChannelLayout()
        switch layout.format.channelCount {
        case 1: value.mChannelLayoutTag = kAudioChannelLayoutTag_Mono
        case 2: value.mChannelLayoutTag = kAudioChannelLayoutTag_Stereo
        default: value.mChannelLayoutTag = kAudioChannelLayoutTag_DiscreteInOrder | UInt32(layout.format.channelCount)
        }
        return withUnsafeBytes(of: &value) { Array($0.prefix(12)) }
    }

    func propertySize(_ id: AudioQueuePropertyID) throws(CompatError) -> UInt32 {
        try lock.locked { () throws(CompatError) in try checkDisposal() }
        switch id {
        case kAudioQueueProperty_IsRunning, kAudioQueueDeviceProperty_NumberChannels,
             kAudioQueueProperty_EnableLevelMetering, kAudioQueueProperty_MaximumOutputPacketSize:
            return 4
        case kAudioQueueDeviceProperty_SampleRate: return 8
        case kAudioQueueProperty_CurrentDevice: return UInt32(MemoryLayout<CFString?>.size)
        case kAudioQueueProperty_StreamDescription: return UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        case kAudioQueueProperty_MagicCookie: return lock.locked { UInt32(magicCookie.count) }
        case kAudioQueueProperty_ChannelLayout: return lock.locked { UInt32((channelLayout ?? defaultChannelLayout).count) }
        case kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB:
            return UInt32(layout.format.channelCount * MemoryLayout<AudioQueueLevelMeterState>.size)
        default: throw unknownProperty(id)
        }
    }

    func property(_ id: AudioQueuePropertyID, _ data: UnsafeMutableRawPointer, _ size: inout UInt32) throws(CompatError) {
        let available = Int(size)
        func put<T>(_ value: T) throws(CompatError) {
            guard available >= MemoryLayout<T>.size else {
                throw CompatError(.invalidPropertySize, "property '\(fourCharCodeString(id))' needs \(MemoryLayout<T>.size) bytes, not \(available)")
            }
            data.storeBytes(of: value, as: T.self)
            size = UInt32(MemoryLayout<T>.size)
        }
        func putBytes(_ bytes: [UInt8]) throws(CompatError) {
            guard available >= bytes.count else {
                throw CompatError(.invalidPropertySize, "property '\(fourCharCodeString(id))' needs \(bytes.count) bytes, not \(available)")
            }
            bytes.withUnsafeBytes { if let base = $0.baseAddress { data.copyMemory(from: base, byteCount: bytes.count) } }
            size = UInt32(bytes.count)
        }
        try lock.locked { () throws(CompatError) in try checkDisposal() }
        switch id {
        case kAudioQueueProperty_IsRunning:
            let running = lock.locked { output?.isRunning ?? input?.isRunning ?? false }
            try put(UInt32(running ? 1 : 0))
        case kAudioQueueDeviceProperty_SampleRate:
            try put(Float64(try deviceFacts().rate))
        case kAudioQueueDeviceProperty_NumberChannels:
            try put(UInt32(try deviceFacts().channels))
        case kAudioQueueProperty_CurrentDevice:
            guard available >= MemoryLayout<CFString?>.size else {
                throw CompatError(.invalidPropertySize, "kAudioQueueProperty_CurrentDevice needs \(MemoryLayout<CFString?>.size) bytes (a CFString?), not \(available)")
            }
            let name = try deviceFacts().name
            // The caller's variable is an initialized `CFString?`: assign, so ARC stays balanced.
            data.assumingMemoryBound(to: Optional<CFString>.self).pointee = CFString(name)
            size = UInt32(MemoryLayout<CFString?>.size)
        case kAudioQueueProperty_MagicCookie:
            try putBytes(lock.locked { magicCookie })
        case kAudioQueueProperty_MaximumOutputPacketSize:
            try put(UInt32(layout.bytesPerFrame))
        case kAudioQueueProperty_StreamDescription:
            try put(layout.streamDescription)
        case kAudioQueueProperty_ChannelLayout:
            try putBytes(lock.locked { channelLayout ?? defaultChannelLayout })
        case kAudioQueueProperty_EnableLevelMetering:
            try put(UInt32(lock.locked { metering } ? 1 : 0))
        case kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB:
            let stride = MemoryLayout<AudioQueueLevelMeterState>.size
            guard available >= stride, available % stride == 0 else {
                throw CompatError(.invalidPropertySize, "level meters are \(stride) bytes per channel (AudioQueueLevelMeterState); \(available) bytes is not a whole number of channels")
            }
            let (enabled, output, input) = lock.locked { (metering, self.output, self.input) }
            guard enabled else {
                throw CompatError(.invalidProperty, "level metering is off; set kAudioQueueProperty_EnableLevelMetering to 1 first")
            }
            var levels = Array(repeating: ChannelLevel(averagePower: 0, peakPower: 0), count: layout.format.channelCount)
            if let output { levels = try core { () throws(AudioQueueError) in try output.currentLevelMeter() } }
            if let input { levels = try core { () throws(AudioQueueError) in try input.currentLevelMeter() } }
            if id == kAudioQueueProperty_CurrentLevelMeterDB { levels = levels.map(\.decibels) }
            let count = min(available / stride, levels.count)
            let states = data.bindMemory(to: AudioQueueLevelMeterState.self, capacity: count)
            for channel in 0..<count {
                states[channel] = AudioQueueLevelMeterState(mAveragePower: levels[channel].averagePower,
                                                            mPeakPower: levels[channel].peakPower)
            }
            size = UInt32(count * stride)
        default:
            throw unknownProperty(id)
        }
    }

    func setProperty(_ id: AudioQueuePropertyID, _ data: UnsafeRawPointer, _ size: UInt32) throws(CompatError) {
        func expect(_ bytes: Int) throws(CompatError) {
            guard Int(size) == bytes else {
                throw CompatError(.invalidPropertySize, "property '\(fourCharCodeString(id))' takes \(bytes) bytes, not \(size)")
            }
        }
        try lock.locked { () throws(CompatError) in try checkDisposal() }
        switch id {
        case kAudioQueueProperty_IsRunning, kAudioQueueDeviceProperty_SampleRate, kAudioQueueDeviceProperty_NumberChannels,
             kAudioQueueProperty_MaximumOutputPacketSize, kAudioQueueProperty_StreamDescription,
             kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB:
            throw CompatError(.invalidProperty, "property '\(fourCharCodeString(id))' is read-only")
        case kAudioQueueProperty_EnableLevelMetering:
            try expect(4)
            let on = data.loadUnaligned(as: UInt32.self) != 0
            lock.locked {
                metering = on
                output?.isLevelMeteringEnabled = on
                input?.isLevelMeteringEnabled = on
            }
        case kAudioQueueProperty_MagicCookie:
            let bytes = Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
            lock.locked { magicCookie = bytes }
        case kAudioQueueProperty_ChannelLayout:
            guard size >= 12 else {
                throw CompatError(.invalidPropertySize, "an AudioChannelLayout is at least 12 bytes, not \(size)")
            }
            let tag = data.loadUnaligned(as: UInt32.self)
            let descriptions = Int(data.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            let channels: Int
            switch tag {
            case kAudioChannelLayoutTag_UseChannelDescriptions:
                guard Int(size) >= 12 + 20 * descriptions else {
                    throw CompatError(.invalidPropertySize, "a layout of \(descriptions) channel descriptions is \(12 + 20 * descriptions) bytes, not \(size)")
                }
                channels = descriptions
            case kAudioChannelLayoutTag_UseChannelBitmap:
                channels = data.loadUnaligned(fromByteOffset: 4, as: UInt32.self).nonzeroBitCount
            default:
                channels = Int(tag & 0xFFFF)
            }
            guard channels == layout.format.channelCount else {
                throw CompatError(kAudioQueueErr_InvalidPropertyValue, "the layout describes \(channels) channels but the queue's format has \(layout.format.channelCount); they must match")
            }
            let bytes = Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
            lock.locked { channelLayout = bytes }
        case kAudioQueueProperty_CurrentDevice:
            try expect(MemoryLayout<CFString?>.size)
            let requested = data.assumingMemoryBound(to: Optional<CFString>.self).pointee
            let current = try deviceFacts().name
            if let requested, requested.string != current {
                throw CompatError(.invalidDevice, "device '\(requested.string)' is not this queue's device ('\(current)'); choose the device for new queues with AudioQueueSetDefaultDevice (Linux)")
            }
        default:
            throw unknownProperty(id)
        }
        notifyListeners(id)
    }

    func addListener(_ id: AudioQueuePropertyID, _ proc: AudioQueuePropertyListenerProc,
                     _ userData: UnsafeMutableRawPointer?) throws(CompatError) {
        guard Self.listenable.contains(id) else {
            if Self.meters.contains(id) {
                throw CompatError(.invalidProperty, "level meters change continuously and cannot be listened to; read them when you need them")
            }
            throw unknownProperty(id)
        }
        try lock.locked { () throws(CompatError) in
            try checkDisposal()
            listeners.append(Listener(id: id, proc: proc, userData: userData))
        }
    }

    func removeListener(_ id: AudioQueuePropertyID, _ proc: AudioQueuePropertyListenerProc,
                        _ userData: UnsafeMutableRawPointer?) throws(CompatError) {
        try lock.locked { () throws(CompatError) in
            try checkDisposal()
            guard let index = listeners.firstIndex(where: { $0.matches(id, proc, userData) }) else {
                throw CompatError(kAudio_ParamError, "no listener for '\(fourCharCodeString(id))' with this function and user data")
            }
            listeners.remove(at: index)
        }
    }

    // MARK: - Time

    func makeTimeline() throws(CompatError) -> AudioQueueTimelineRef {
        try lock.locked { () throws(CompatError) -> AudioQueueTimelineRef in
            try checkDisposal()
            try requireOutput("AudioQueueCreateTimeline")
            try bindLocked()
            guard let output else { throw CompatError(.invalidDevice, "the queue has no device") }
            let timeline = try core { () throws(AudioQueueError) in try output.makeTimeline() }
            let key = AudioQueueTimelineRef(Unmanaged.passUnretained(timeline).toOpaque())
            timelines[key] = timeline
            return key
        }
    }

    func disposeTimeline(_ key: AudioQueueTimelineRef) throws(CompatError) {
        try lock.locked { () throws(CompatError) in
            try checkDisposal()
            guard let timeline = timelines.removeValue(forKey: key), let output else {
                throw CompatError(kAudio_ParamError, "the timeline does not belong to this queue (or was disposed of)")
            }
            try core { () throws(AudioQueueError) in try output.disposeTimeline(timeline) }
        }
    }

    func currentTime(timeline key: AudioQueueTimelineRef?) throws(CompatError) -> (AudioTimeStamp, Bool) {
        let (output, input, engine, timeline, origin) = try lock.locked { () throws(CompatError) in
            try checkDisposal()
            try bindLocked()
            var timeline: Timeline?
            if let key {
                guard let known = timelines[key] else {
                    throw CompatError(kAudio_ParamError, "the timeline does not belong to this queue (or was disposed of)")
                }
                timeline = known
            }
            return (self.output, self.input, self.engine, timeline, inputOrigin)
        }
        var stamp = AudioTimeStamp()
        stamp.mRateScalar = 1
        stamp.mFlags = kAudioTimeStampSampleHostTimeValid | kAudioTimeStampRateScalarValid
        if let output {
            let now = try core { () throws(AudioQueueError) in try output.currentTime(timeline: timeline) }
            stamp.mSampleTime = Double(now.sampleTime)
            stamp.mHostTime = now.hostTime
            return (stamp, now.discontinuity)
        }
        guard let engine else { return (stamp, false) }
        let now = engine.currentTime()
        stamp.mSampleTime = (input?.isRunning ?? false) ? Double(max(0, now.sampleTime - (origin ?? now.sampleTime))) : 0
        stamp.mHostTime = now.hostTime
        return (stamp, false)
    }

    private func boundEngine() throws(CompatError) -> Engine {
        try lock.locked { () throws(CompatError) -> Engine in
            try checkDisposal()
            try bindLocked()
            guard let engine else { throw CompatError(.invalidDevice, "the queue has no device") }
            return engine
        }
    }

    func deviceCurrentTime() throws(CompatError) -> AudioTimeStamp {
        let engine = try boundEngine()
        let now = engine.currentTime()
        var stamp = AudioTimeStamp()
        stamp.mHostTime = now.hostTime
        stamp.mFlags = kAudioTimeStampHostTimeValid
        if engine.device.isRunning {
            stamp.mSampleTime = Double(now.sampleTime)
            stamp.mRateScalar = 1
            stamp.mFlags |= kAudioTimeStampSampleTimeValid | kAudioTimeStampRateScalarValid
        }
        return stamp
    }

    private func runningDevice(_ function: String) throws(CompatError) -> Engine {
        let engine = try boundEngine()
        guard engine.device.isRunning else {
            throw CompatError(.invalidRunState, "\(function) needs the device running; '\(engine.device.name)' is not")
        }
        return engine
    }

    private func deviceSampleTime(_ stamp: AudioTimeStamp, _ engine: Engine) throws(CompatError) -> Int64 {
        if stamp.mFlags & kAudioTimeStampSampleTimeValid != 0 {
            guard stamp.mSampleTime.isFinite else { throw CompatError(kAudio_ParamError, "mSampleTime is not a number") }
            return Int64(stamp.mSampleTime.rounded())
        }
        if stamp.mFlags & kAudioTimeStampHostTimeValid != 0 { return engine.sampleTime(forHostTime: stamp.mHostTime) }
        throw CompatError(kAudio_ParamError, "the time stamp has neither kAudioTimeStampSampleTimeValid nor kAudioTimeStampHostTimeValid set")
    }

    func nearestStartTime(_ stamp: inout AudioTimeStamp) throws(CompatError) {
        let engine = try runningDevice("AudioQueueDeviceGetNearestStartTime")
        let sample = engine.nearestStartTime(atOrAfter: try deviceSampleTime(stamp, engine))
        stamp.mSampleTime = Double(sample)
        stamp.mHostTime = engine.hostTime(forSampleTime: sample)
        stamp.mRateScalar = 1
        stamp.mFlags = kAudioTimeStampSampleHostTimeValid | kAudioTimeStampRateScalarValid
    }

    func translate(_ stamp: AudioTimeStamp) throws(CompatError) -> AudioTimeStamp {
        let engine = try runningDevice("AudioQueueDeviceTranslateTime")
        let sample = try deviceSampleTime(stamp, engine)
        var out = AudioTimeStamp()
        out.mSampleTime = stamp.mFlags & kAudioTimeStampSampleTimeValid != 0 ? stamp.mSampleTime : Double(sample)
        out.mHostTime = stamp.mFlags & kAudioTimeStampHostTimeValid != 0 ? stamp.mHostTime : engine.hostTime(forSampleTime: sample)
        out.mRateScalar = 1
        out.mFlags = kAudioTimeStampSampleHostTimeValid | kAudioTimeStampRateScalarValid
        return out
    }

    // MARK: - Offline rendering

    func setOfflineRenderFormat(_ format: AudioStreamBasicDescription?, _ channelLayout: UnsafePointer<AudioChannelLayout>?) throws(CompatError) {
        var newLayout: LinearPCMLayout?
        if let format {
            switch LinearPCMLayout.make(format) {
            case .success(let layout): newLayout = layout
            case .failure(let error): throw CompatError(error.osStatus, "offline render format: \(error.message)")
            }
        }
        try lock.locked { () throws(CompatError) in
            try checkDisposal()
            try requireOutput("AudioQueueSetOfflineRenderFormat")
            if let output, output.isRunning || startPending {
                throw CompatError(.invalidRunState, "change the render mode while the queue is stopped (AudioQueueStop first)")
            }
            if newLayout == offlineLayout { return }
            if isBound { unbindLocked() }
            offlineLayout = newLayout
        }
    }

    func offlineRender(_ stamp: AudioTimeStamp, into ref: AudioQueueBufferRef, frames: UInt32) throws(CompatError) {
        let (device, renderLayout) = try lock.locked { () throws(CompatError) in
            // A queue being disposed of asynchronously renders on: that is how it plays out.
            if disposal == .done { try checkDisposal() }
            try requireOutput("AudioQueueOfflineRender")
            guard let offlineLayout else {
                throw CompatError(.invalidOfflineMode, "the queue is not in offline mode; call AudioQueueSetOfflineRenderFormat first")
            }
            guard buffers[ref] != nil else {
                throw CompatError(.invalidBuffer, "the buffer does not belong to this queue; allocate it with AudioQueueAllocateBuffer on this queue")
            }
            try bindLocked()
            guard let offlineDevice else { throw CompatError(.invalidOfflineMode, "the queue is not in offline mode") }
            return (offlineDevice, offlineLayout)
        }
        let bytes = Int(frames) * renderLayout.bytesPerFrame
        guard bytes <= Int(ref.pointee.mAudioDataBytesCapacity) else {
            throw CompatError(.invalidParameter, "\(frames) frames of the offline format need \(bytes) bytes but the buffer holds \(ref.pointee.mAudioDataBytesCapacity)")
        }
        // Render (and discard) up to the requested sample time if it lies ahead.
        if stamp.mSampleTime.isFinite, stamp.mFlags & kAudioTimeStampHostTimeValid == 0 || stamp.mFlags & kAudioTimeStampSampleTimeValid != 0 {
            var gap = Int64(stamp.mSampleTime.rounded()) - device.currentTime().sampleTime
            if gap > 0 {
                let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: OfflineChunk.frames * renderLayout.bytesPerFrame,
                                                                     alignment: 16)
                defer { scratch.deallocate() }
                while gap > 0 {
                    let n = Int(min(gap, Int64(OfflineChunk.frames)))
                    _ = try core { () throws(AudioQueueError) in try device.render(frames: n, into: scratch) }
                    gap -= Int64(n)
                }
            }
        }
        var done = 0
        while done < Int(frames) {
            let n = min(Int(frames) - done, OfflineChunk.frames)
            let target = UnsafeMutableRawBufferPointer(start: ref.pointee.mAudioData + done * renderLayout.bytesPerFrame,
                                                       count: n * renderLayout.bytesPerFrame)
            _ = try core { () throws(AudioQueueError) in try device.render(frames: n, into: target) }
            done += n
        }
        if renderLayout.isBigEndian {
            renderLayout.convertByteOrder(from: ref.pointee.mAudioData, to: ref.pointee.mAudioData, byteCount: bytes)
        }
        ref.pointee.mAudioDataByteSize = UInt32(bytes)
    }
}

/// One call of a block callback, prepared on the callback thread to run on the block's dispatch queue.
struct BlockDelivery {
    let queue: AudioQueueRef
    let body: (AudioQueueRef) -> Void
    func run() { body(queue) }
}

/// Carries a value the caller knows may cross threads (C pointers handed to a callback).
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Every live ``CompatQueue`` by its reference, so a stale or foreign ``AudioQueueRef`` is
/// answered with an error instead of being dereferenced.
typealias QueueRegistry = HandleRegistry<CompatQueue>

extension HandleRegistry where Object == CompatQueue {
    static let shared = HandleRegistry(unknown: CompatError(kAudio_ParamError, "not an audio queue (never created, or disposed of)"))
    func queue(_ ref: AudioQueueRef) throws(CompatError) -> CompatQueue { try object(ref) }
}

/// Live objects behind opaque C references (queues, files), looked up before every use.
final class HandleRegistry<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLockLite()
    private var objects: [OpaquePointer: Object] = [:]
    private let unknown: CompatError

    init(unknown: CompatError) { self.unknown = unknown }

    /// The reference C code holds for `object`.
    static func handle(_ object: Object) -> OpaquePointer { OpaquePointer(Unmanaged.passUnretained(object).toOpaque()) }

    func add(_ object: Object) { lock.locked { objects[Self.handle(object)] = object } }
    func remove(_ object: Object) { lock.locked { _ = objects.removeValue(forKey: Self.handle(object)) } }

    func object(_ handle: OpaquePointer) throws(CompatError) -> Object {
        guard let object = lock.locked({ objects[handle] }) else { throw unknown }
        return object
    }
}
