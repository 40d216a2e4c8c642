import Synchronization

/// Hands every ``ControlUpdate`` to every subscriber.
///
/// Handlers run on the thread that publishes (the one that executes a command, or polls the
/// dispatcher), one update at a time, in order, with no lock held: a handler may subscribe,
/// cancel or execute commands, but should return quickly (queue the update, send a datagram).
/// Never on the realtime thread.
public final class ControlPublisher: Sendable {
    private let subscribers = Mutex<(next: Int, handlers: [(id: Int, handler: @Sendable (ControlUpdate) -> Void)])>((0, []))

    /// Creates a publisher with no subscribers.
    public init() {}

    /// Calls `handler` with every update published from now until the subscription is cancelled.
    public func subscribe(_ handler: @escaping @Sendable (ControlUpdate) -> Void) -> ControlSubscription {
        let id = subscribers.withLock { state in
            state.next += 1
            state.handlers.append((state.next, handler))
            return state.next
        }
        return ControlSubscription { [weak self] in
            self?.subscribers.withLock { $0.handlers.removeAll { $0.id == id } }
        }
    }

    /// How many subscriptions are live.
    public var subscriberCount: Int { subscribers.withLock { $0.handlers.count } }

    /// Hands `updates` to every subscriber, in order.
    public func publish(_ updates: [ControlUpdate]) {
        guard !updates.isEmpty else { return }
        let handlers = subscribers.withLock { $0.handlers.map(\.handler) }
        for update in updates {
            for handler in handlers { handler(update) }
        }
    }
}

/// A subscription to a ``ControlPublisher``; ``cancel()`` ends it (and so does releasing it).
public final class ControlSubscription: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }

    /// Stops the updates; calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action in defer { action = nil }; return action }
        action?()
    }

    deinit { cancel() }
}
