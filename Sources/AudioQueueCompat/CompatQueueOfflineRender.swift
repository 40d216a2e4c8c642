import Lockstep

// Offline rendering: the offline render format (which puts the queue on a private engine over an
// OfflineDevice) and rendering into a buffer of the queue.
extension CompatQueue {
    func setOfflineRenderFormat(_ format: AudioStreamBasicDescription?, _ channelLayout: UnsafePointer<AudioChannelLayout>?) throws(AudioQueueError) {
        var newLayout: LinearPCMLayout?
        if let format {
            switch LinearPCMLayout.make(format) {
            case .success(let layout): newLayout = layout
            case .failure(let error): throw AudioQueueError(error.osStatus, "offline render format: \(error.message)")
            }
        }
        try state.withLock { (state) throws(AudioQueueError) in
            try state.checkDisposal()
            try requireOutput("AudioQueueSetOfflineRenderFormat")
            if let output = state.output, output.isRunning || state.startPending {
                throw AudioQueueError(.invalidRunState, "change the render mode while the queue is stopped (AudioQueueStop first)")
            }
            if newLayout == state.offlineLayout { return }
            if state.isBound { unbind(&state) }
            state.offlineLayout = newLayout
        }
    }

    func offlineRender(_ stamp: AudioTimeStamp, into ref: AudioQueueBufferRef, frames: UInt32) throws(AudioQueueError) {
        let (device, renderLayout) = try state.withLock { (state) throws(AudioQueueError) in
            // A queue being disposed of asynchronously renders on: that is how it plays out.
            if state.disposal == .done { try state.checkDisposal() }
            try requireOutput("AudioQueueOfflineRender")
            guard let offlineLayout = state.offlineLayout else {
                throw AudioQueueError(.invalidOfflineMode, "the queue is not in offline mode; call AudioQueueSetOfflineRenderFormat first")
            }
            guard state.buffers[ref] != nil else {
                throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue; allocate it with AudioQueueAllocateBuffer on this queue")
            }
            try bind(&state)
            guard let offlineDevice = state.offlineDevice else { throw AudioQueueError(.invalidOfflineMode, "the queue is not in offline mode") }
            return (offlineDevice, offlineLayout)
        }
        let bytes = Int(frames) * renderLayout.bytesPerFrame
        guard bytes <= Int(ref.pointee.mAudioDataBytesCapacity) else {
            throw AudioQueueError(.invalidParameter, "\(frames) frames of the offline format need \(bytes) bytes but the buffer holds \(ref.pointee.mAudioDataBytesCapacity)")
        }
        // Render (and discard) up to the requested sample time if it lies ahead.
        if stamp.mSampleTime.isFinite, !stamp.mFlags.contains(.hostTimeValid) || stamp.mFlags.contains(.sampleTimeValid) {
            var gap = Int64(stamp.mSampleTime.rounded()) - device.currentTime().sampleTime
            if gap > 0 {
                let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: OfflineChunk.frames * renderLayout.bytesPerFrame,
                                                                     alignment: 16)
                defer { scratch.deallocate() }
                while gap > 0 {
                    let n = Int(min(gap, Int64(OfflineChunk.frames)))
                    _ = try device.render(frames: n, into: scratch)
                    gap -= Int64(n)
                }
            }
        }
        // The buffers whose audio ends within this render go back to the callback first (it may
        // flush and stop at the end of its file: then this render plays all of it).
        let queueRate = layout.format.sampleRate, deviceRate = Double(renderLayout.format.sampleRate)
        releaseForOfflineRender(frames: Int64((Double(frames) * queueRate / deviceRate).rounded(.down)))
        let first = device.currentTime().sampleTime
        state.withLock { $0.outputStoppedAt = nil }
        var done = 0
        while done < Int(frames) {
            let n = min(Int(frames) - done, OfflineChunk.frames)
            let target = UnsafeMutableRawBufferPointer(start: ref.pointee.mAudioData + done * renderLayout.bytesPerFrame,
                                                       count: n * renderLayout.bytesPerFrame)
            _ = try device.render(frames: n, into: target)
            done += n
        }
        // A queue that stopped within this render (it played out what was enqueued after a stop)
        // rendered its last frame there: the buffer holds the audio up to it, not the silence after.
        var rendered = bytes
        if let stop = state.withLock({ $0.outputStoppedAt }), stop >= first, stop < first + Int64(frames) {
            rendered = Int(stop - first) * renderLayout.bytesPerFrame
        }
        if renderLayout.isBigEndian {
            renderLayout.convertByteOrder(from: ref.pointee.mAudioData, to: ref.pointee.mAudioData, byteCount: rendered)
        }
        ref.pointee.mAudioDataByteSize = UInt32(rendered)
    }
}
