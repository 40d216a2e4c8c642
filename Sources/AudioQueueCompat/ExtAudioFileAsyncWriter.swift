import Foundation
import Lockstep
import Synchronization

/// The asynchronous half of `ExtAudioFileWriteAsync`: a single-producer single-consumer ring of
/// decoded client frames (64-bit floats, the client's channels), filled on the caller's thread,
/// and a worker thread that drains it into the file.
///
/// The caller's side (``enqueue(_:frames:)``) never waits for the disk and is written not to allocate (not measured): it
/// decodes into preallocated memory, publishes the new end with an atomic store and posts a
/// semaphore. The worker calls `drain` (the owning file converts and writes, under its lock) each
/// time it is woken, and once more when stopped.
final class ExtAudioFileAsyncWriter: @unchecked Sendable {
    /// Frames the ring holds: the largest single write (`kExtAudioFileError_AsyncWriteTooLarge`
    /// above it), and how far the caller may run ahead of the disk
    /// (`kExtAudioFileError_AsyncWriteBufferOverflow` beyond it).
    static let capacityFrames = 65536

    let format: PCMFormat
    private let ring: UnsafeMutablePointer<Double>
    /// Frames written (producer) and consumed (consumer) since the start; never wrap in practice.
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// The first error the worker met writing (reported by the next call, and by dispose).
    private let failure = Mutex<AudioQueueError?>(nil)

    /// Starts the worker; `drain` is called on it, whenever frames may be waiting.
    init(format: PCMFormat, drain: @escaping @Sendable (ExtAudioFileAsyncWriter) -> Void) {
        self.format = format
        let count = Self.capacityFrames * format.channelCount
        ring = .allocate(capacity: count)
        ring.initialize(repeating: 0, count: count)
        let thread = Thread { [self] in
            ThreadName.setCurrent("lockstep.extaudiofile.write")
            while true {
                wake.wait()
                drain(self)
                if stopping.load(ordering: .acquiring) && (isEmpty || error != nil) { break }
            }
            finished.signal()
        }
        thread.name = "lockstep.extaudiofile.write"
        thread.start()
    }

    deinit { ring.deallocate() }

    /// Copies `frames` frames of the client's buffers into the ring and wakes the worker.
    /// - Throws: `kExtAudioFileError_AsyncWriteTooLarge` (more than the ring holds),
    ///   `kExtAudioFileError_AsyncWriteBufferOverflow` (the disk has fallen behind: nothing is
    ///   taken), the worker's error.
    func enqueue(_ list: UnsafeMutableAudioBufferListPointer, frames: Int) throws(AudioQueueError) {
        if let error = failure.withLock({ $0 }) { throw error }
        guard frames <= Self.capacityFrames else {
            throw AudioQueueError(kExtAudioFileError_AsyncWriteTooLarge, "\(frames) frames is more than ExtAudioFileWriteAsync takes at once (\(Self.capacityFrames)); write in smaller pieces")
        }
        let written = head.load(ordering: .relaxed)
        let free = Self.capacityFrames - (written - tail.load(ordering: .acquiring))
        guard frames <= free else {
            throw AudioQueueError(kExtAudioFileError_AsyncWriteBufferOverflow, "the asynchronous writer is \(Self.capacityFrames - free) frames behind and has room for \(free), not \(frames); these frames were not written")
        }
        let channels = format.channelCount
        let start = written % Self.capacityFrames
        let first = min(frames, Self.capacityFrames - start)
        PCMSamples.decode(format: format, frames: first, into: ring + start * channels) { UnsafeRawPointer(list[$0].mData!) }
        if first < frames {
            let skip = first * format.bytesPerFrame
            PCMSamples.decode(format: format, frames: frames - first, into: ring) { UnsafeRawPointer(list[$0].mData!) + skip }
        }
        head.store(written + frames, ordering: .releasing)
        wake.signal()
    }

    /// Whether every frame enqueued has been consumed.
    var isEmpty: Bool { tail.load(ordering: .relaxed) == head.load(ordering: .acquiring) }

    /// Calls `body` with the waiting frames, in contiguous pieces, consuming each piece after it.
    /// Consumers must be serialized (the owning file's lock).
    func consume(_ body: (UnsafePointer<Double>, Int) throws(AudioQueueError) -> Void) throws(AudioQueueError) {
        while true {
            let read = tail.load(ordering: .relaxed)
            let available = head.load(ordering: .acquiring) - read
            guard available > 0 else { return }
            let start = read % Self.capacityFrames
            let count = min(available, Self.capacityFrames - start)
            try body(ring + start * format.channelCount, count)
            tail.store(read + count, ordering: .releasing)
        }
    }

    /// Records the worker's first error.
    func record(_ error: AudioQueueError) {
        failure.withLock { if $0 == nil { $0 = error } }
    }

    /// The error the worker met, if any.
    var error: AudioQueueError? { failure.withLock { $0 } }

    /// Stops the worker after it has drained the ring, and waits for it. Call once, without the
    /// owning file's lock (the worker needs it to drain).
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        finished.wait()
    }
}
