import Dispatch
import Synchronization

/// The callback side of a queue, shared by ``OutputQueue`` and ``InputQueue``: property
/// listeners, event handlers and their tokens, the `AsyncStream`s of events, and delivery on
/// the queue's ``CallbackExecutor``.
///
/// Delivery follows the device (``AudioDevice/callbackDelivery``): with a device that delivers
/// inline (the offline device) a Dispatch-queue callback runs synchronously, so it has run when
/// `render` returns; with a live device it runs asynchronously on its queue. Callbacks on
/// ``CallbackExecutor/engineThread`` run on the thread that drains events.
///
/// Thread safety: every method may be called from any thread except the realtime thread.
final class QueueCallbacks<Owner: AnyObject & Sendable>: Sendable {
    /// A property listener of the owning queue.
    typealias Listener = @Sendable (Owner, QueueProperty) -> Void
    /// An event handler of the owning queue.
    typealias Handler = @Sendable (Owner, QueueEvent) -> Void

    /// Where callbacks run.
    let executor: CallbackExecutor
    private let deliversInline: Bool
    private let registry = Mutex(Registry())
    private let streams = StreamRegistry<QueueEvent>()

    private struct Registry: @unchecked Sendable {
        var listeners: [Int: (QueueProperty, Listener)] = [:]
        var handlers: [Int: Handler] = [:]
        var nextToken = 0
    }

    /// Callbacks on `executor`, delivered as `delivery` (the device's) says.
    init(executor: CallbackExecutor, delivery: CallbackDelivery) {
        self.executor = executor
        deliversInline = delivery == .inline
    }

    /// Registers a listener of `property`; `queueName` names the queue in errors.
    /// - Throws: ``AudioQueueError/Code/invalidProperty`` for a property that changes continuously.
    func addListener(_ property: QueueProperty, queueName: String,
                     _ listener: @escaping Listener) throws(AudioQueueError) -> PropertyListenerToken {
        guard property.isListenable else {
            throw AudioQueueError(.invalidProperty, "\(property.rawValue) changes continuously and cannot be listened to; read it when you need it")
        }
        return registry.withLock { registry in
            registry.nextToken += 1
            registry.listeners[registry.nextToken] = (property, listener)
            return PropertyListenerToken(id: registry.nextToken, property: property)
        }
    }

    /// Removes a listener.
    /// - Throws: ``AudioQueueError/Code/invalidParameter`` for a token not registered here.
    func removeListener(_ token: PropertyListenerToken, queueName: String) throws(AudioQueueError) {
        let removed = registry.withLock { $0.listeners.removeValue(forKey: token.id) != nil }
        if !removed {
            throw AudioQueueError(.invalidParameter, "no \(token.property.rawValue) listener with this token on queue '\(queueName)'")
        }
    }

    /// Registers an event handler; returns its token.
    func addHandler(_ handler: @escaping Handler) -> Int {
        registry.withLock { registry in
            registry.nextToken += 1
            registry.handlers[registry.nextToken] = handler
            return registry.nextToken
        }
    }

    /// Removes an event handler (an unknown token is ignored).
    func removeHandler(_ token: Int) {
        _ = registry.withLock { $0.handlers.removeValue(forKey: token) }
    }

    /// A new stream of the owner's events from now on; it finishes when the queue is disposed of.
    var events: AsyncStream<QueueEvent> { streams.makeStream(finishedWith: .disposed) }

    /// Sends `event` to every stream and handler.
    func yield(_ event: QueueEvent, from owner: Owner) {
        let handlers = registry.withLock { Array($0.handlers.values) }
        streams.yield(event)
        for handler in handlers { deliver { handler(owner, event) } }
    }

    /// Calls every listener of `property`.
    func notify(_ property: QueueProperty, from owner: Owner) {
        let listeners = registry.withLock { $0.listeners.values.filter { $0.0 == property }.map(\.1) }
        for listener in listeners { deliver { listener(owner, property) } }
    }

    /// Runs `work` on the executor.
    func deliver(_ work: @escaping @Sendable () -> Void) {
        switch executor {
        case .engineThread:
            work()
        case .dispatchQueue(let box):
            if deliversInline { box.queue.sync(execute: work) } else { box.queue.async(execute: work) }
        }
    }

    /// Forgets every listener and handler and finishes the streams (with `.disposed`).
    func close() {
        registry.withLock { registry in
            registry.listeners.removeAll()
            registry.handlers.removeAll()
        }
        streams.finish(with: .disposed)
    }
}
