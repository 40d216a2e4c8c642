/// What an output queue does with a buffer that arrives after the time it was due to play
/// (the queue ran dry — an underrun — and the buffer comes in while its time passes).
///
/// Either way the underrun is reported: a ``Discontinuity`` of kind `underrun` (with the device
/// sample time the missing audio was due and its length) through the queue's events and the
/// engine, and the discontinuity flag of the queue's ``Timeline``s.
///
/// The same choice applies when the device's clock skips frames while the queue runs (an
/// ``Discontinuity/Kind/xrun`` whose length is the frames skipped): a queue that skips to stay
/// aligned skips as much of its audio (counted in ``OutputQueue/skippedFrames``), one that plays
/// in full plays on from where it was and its timeline slides by the skip.
public enum LateBufferPolicy: Sendable, Hashable {
    /// The queue's clock keeps running through the underrun and the late buffer plays at the
    /// time it was scheduled for: its late part is skipped, and the queue stays sample-aligned
    /// with every other queue started with it. Right for synchronized layers; the default of
    /// ``OutputQueue``.
    case skipToStayAligned
    /// The late buffer plays in full from the moment it arrives: the queue's timeline slides by
    /// the lateness (its later buffers play that much later on the device) and no audio is
    /// lost. Apple's Audio Queue behaviour, and the policy of `AudioQueueCompat` output queues.
    case playInFull
}
