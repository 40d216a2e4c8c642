import Synchronization

/// A queue's timeline object: Audio Queue's `AudioQueueTimelineRef`.
///
/// Pass it to ``OutputQueue/currentTime(timeline:)`` to learn whether a discontinuity (an
/// underrun of the queue, an xrun, a sample-rate change…) happened since you last asked. Create
/// with ``OutputQueue/makeTimeline()``, dispose of with ``OutputQueue/disposeTimeline(_:)``.
public final class Timeline: Sendable {
    weak let queue: OutputQueue?
    private let seen: Atomic<Int>

    init(queue: OutputQueue, seen: Int) {
        self.queue = queue
        self.seen = Atomic(seen)
    }

    /// Records `count` as seen and returns the previously seen count.
    func exchangeSeen(_ count: Int) -> Int {
        seen.exchange(count, ordering: .acquiringAndReleasing)
    }
}
