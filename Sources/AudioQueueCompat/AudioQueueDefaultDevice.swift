import Foundation
import Lockstep
import LockstepFiles
import LockstepJACK
import Synchronization

/// Where queues play and record when no offline render format is set: the Linux counterpart of
/// Apple's default output and input device. Linux addition (choose it with
/// ``AudioQueueSetDefaultDevice(_:)`` before creating queues).
///
/// Every queue that uses the default device shares **one** Lockstep ``Engine`` — one device
/// timeline — so start times given to ``AudioQueueStart(_:_:)`` and
/// ``AudioQueueEnqueueBufferWithParameters(_:_:_:_:_:_:_:_:_:_:)`` line queues up to the sample,
/// exactly as queues on one Apple device do.
public enum AudioQueueDefaultDevice: Sendable {
    /// A JACK client on a running server (`serverName` nil: `JACK_DEFAULT_SERVER` or JACK's
    /// default), opened when the first queue needs it and started at once. With
    /// `connectToPhysicalOutputs`, its outputs go to the physical playback ports and its inputs
    /// come from the physical capture ports, like Apple's default devices.
    case jack(JACKDevice.Options)
    /// An engine you created — for example on an ``OfflineDevice`` whose `render` you call
    /// yourself, to run ported code deterministically.
    case engine(Engine)

    /// The default: a JACK client named after the process with 2 outputs and 2 inputs, connected
    /// to the physical ports, on `JACK_DEFAULT_SERVER` or JACK's default server.
    public static var standard: AudioQueueDefaultDevice {
        .jack(JACKDevice.Options(clientName: String(ProcessInfo.processInfo.processName.prefix(60)),
                                 channelCount: 2, inputChannelCount: 2, connectToPhysicalOutputs: true))
    }
}

/// Chooses the device that queues created from now on use (queues already bound keep theirs).
/// Linux addition: Apple's queues always use the system's default device.
///
/// - Returns: ``noErr``.
@discardableResult
public func AudioQueueSetDefaultDevice(_ device: AudioQueueDefaultDevice) -> OSStatus {
    DefaultDevice.shared.configure(device)
    return noErr
}

/// The engine behind the default device, opening it (for JACK: connecting the client and starting
/// it) if no queue has yet. Linux addition: use it to reach the ``JACKDevice`` (`engine.device as?
/// JACKDevice`) and connect its ports, or to render an offline default device.
///
/// - Throws: ``AudioQueueError`` (``AudioQueueError/Code/invalidDevice`` when no JACK server runs).
public func AudioQueueCompatDefaultEngine() throws(AudioQueueError) -> Engine {
    try DefaultDevice.shared.engine()
}

/// The process-wide default device and its lazily created shared engine.
///
/// Any thread may call it; the first ``engine()`` call for a JACK device opens and starts the
/// client with the mutex held, so concurrent first calls share one engine.
final class DefaultDevice: Sendable {
    static let shared = DefaultDevice()

    /// The configured device and the engine made for it (nil until a queue needs it).
    private struct State {
        var configuration = AudioQueueDefaultDevice.standard
        var current: Engine?
    }

    private let state = Mutex(State())

    func configure(_ device: AudioQueueDefaultDevice) {
        state.withLock { state in
            state.configuration = device
            if case .engine(let engine) = device { state.current = engine } else { state.current = nil }
        }
    }

    func engine() throws(AudioQueueError) -> Engine {
        let result: Result<Engine, AudioQueueError> = state.withLock { state in
            if let current = state.current { return .success(current) }
            guard case .jack(let options) = state.configuration else {
                return .failure(AudioQueueError(.invalidDevice, "no default device is configured"))
            }
            do throws(AudioQueueError) {
                let device = try JACKDevice(options: options)
                let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory,
                                        maximumQueues: 256, maximumBuffersPerQueue: 1024)
                try device.start()
                if options.connectToPhysicalOutputs { device.connectToPhysicalInputs() }
                state.current = engine
                return .success(engine)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// Makes the private engine of a queue in offline mode: an ``OfflineDevice`` in the offline
/// render format, with rate conversion for a queue at another rate.
func makeOfflineEngine(_ layout: LinearPCMLayout) throws(AudioQueueError) -> (Engine, OfflineDevice) {
    let device = try OfflineDevice(format: layout.format, maximumFramesPerRender: OfflineChunk.frames, name: "offline")
    let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory, maximumQueues: 1,
                            maximumBuffersPerQueue: 1024)
    return (engine, device)
}

/// How many frames one offline render call covers at most (longer requests render in chunks).
enum OfflineChunk {
    static let frames = 4096
}
