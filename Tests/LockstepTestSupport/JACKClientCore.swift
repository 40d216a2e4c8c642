import CJack
import Synchronization

/// What every JACK test client's callbacks share: counting xruns and noticing the server going
/// away. Subclasses add their process state; the callbacks below get the object back from the
/// context pointer the client was given (retained for the client's lifetime).
class JACKClientCore: @unchecked Sendable {
    let xruns = Atomic<Int>(0)
    let shutdown = Atomic<Bool>(false)

    /// Called from JACK's shutdown callback (never calls into JACK); subclasses may keep `reason`.
    func serverWentAway(reason: UnsafePointer<CChar>?) {
        shutdown.store(true, ordering: .releasing)
    }

    /// `JackXRunCallback`: counts xruns.
    static let xrunCallback: JackXRunCallback = { context in
        guard let context else { return 0 }
        Unmanaged<JACKClientCore>.fromOpaque(context)._withUnsafeGuaranteedRef {
            _ = $0.xruns.wrappingAdd(1, ordering: .relaxed)
        }
        return 0
    }

    /// `JackInfoShutdownCallback`: tells the core the server went away.
    static let shutdownCallback: JackInfoShutdownCallback = { _, reason, context in
        guard let context else { return }
        Unmanaged<JACKClientCore>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.serverWentAway(reason: reason) }
    }
}
