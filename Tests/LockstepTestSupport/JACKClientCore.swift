import CJack
import Synchronization

/// What every JACK test client's callbacks share: counting xruns and noticing the server going
/// away. Subclasses add their process state; the callbacks below get the object back from the
/// context pointer the client was given (retained for the client's lifetime).
class JACKClientCore: @unchecked Sendable {
    let xruns = Atomic<Int>(0)
    let shutdown = Atomic<Bool>(false)

    /// Latencies (frames) the client declares for its ports in `declaredMode`, one per port of
    /// `declaredPorts`; set before activation, empty for none.
    var declaredLatencies: [Int] = []
    var declaredMode = JackCaptureLatency
    var declaredPorts: UnsafeMutablePointer<OpaquePointer?>?

    /// `JackLatencyCallback`: declares ``declaredLatencies`` on the client's ports, as a device
    /// driver declares its ports' latencies (capture latency on outputs, playback latency on
    /// inputs).
    static let latencyCallback: JackLatencyCallback = { mode, context in
        guard let context else { return }
        Unmanaged<JACKClientCore>.fromOpaque(context)._withUnsafeGuaranteedRef { core in
            guard mode == core.declaredMode, let ports = core.declaredPorts else { return }
            for (index, latency) in core.declaredLatencies.enumerated() {
                guard let port = ports[index] else { continue }
                var range = jack_latency_range_t(min: UInt32(latency), max: UInt32(latency))
                jack_port_set_latency_range(port, mode, &range)
            }
        }
    }

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
