import Lockstep
import Synchronization

/// Live objects behind opaque C references (queues, files), looked up before every use.
///
/// Any thread may add, remove and look up objects; each call holds the registry's mutex briefly.
final class HandleRegistry<Object: AnyObject & Sendable>: Sendable {
    /// Keyed by the handle's address (an integer, so a caller's pointer never enters the mutex).
    private let objects = Mutex<[UInt: Object]>([:])
    private let unknown: AudioQueueError

    init(unknown: AudioQueueError) { self.unknown = unknown }

    /// The reference C code holds for `object`.
    static func handle(_ object: Object) -> OpaquePointer { OpaquePointer(Unmanaged.passUnretained(object).toOpaque()) }

    func add(_ object: Object) {
        let key = UInt(bitPattern: Self.handle(object))
        objects.withLock { $0[key] = object }
    }

    func remove(_ object: Object) {
        let key = UInt(bitPattern: Self.handle(object))
        objects.withLock { _ = $0.removeValue(forKey: key) }
    }

    func object(_ handle: OpaquePointer) throws(AudioQueueError) -> Object {
        let key = UInt(bitPattern: handle)
        guard let object = objects.withLock({ $0[key] }) else { throw unknown }
        return object
    }
}

/// Every live ``CompatQueue`` by its reference, so a stale or foreign ``AudioQueueRef`` is
/// answered with an error instead of being dereferenced.
typealias QueueRegistry = HandleRegistry<CompatQueue>

extension HandleRegistry where Object == CompatQueue {
    static let shared = HandleRegistry(unknown: AudioQueueError(kAudio_ParamError, "not an audio queue (never created, or disposed of)"))
    func queue(_ ref: AudioQueueRef) throws(AudioQueueError) -> CompatQueue { try object(ref) }
}
