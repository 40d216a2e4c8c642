import Foundation
import Lockstep
import LockstepFiles
import LockstepSession
import Synchronization

/// A session played by a ``SessionPlayer`` on an ``OfflineDevice`` (mono, 48 kHz unless the
/// session says otherwise), for sample-exact tests of control: its audio files and session file
/// are written to a temporary folder, and the player is started at session sample 0 on device
/// sample 0 (so device sample = session sample until a seek or pause).
public final class OfflineShow: @unchecked Sendable {
    /// The folder holding the session and its audio.
    public let temp: TemporaryTestDirectory
    /// The device; render with ``render(_:)``.
    public let device: OfflineDevice
    /// The engine.
    public let engine: Engine
    /// The player, started.
    public let player: SessionPlayer
    /// Everything ``render(_:)`` rendered so far (interleaved).
    public private(set) var output: [Float] = []
    /// Called after every 256 frames rendered (a control dispatcher's poll, say).
    public var afterEachBlock: () -> Void = {}

    /// Writes `audio` (name, mono float samples at 48 kHz) and the session `text`, loads it and
    /// starts it.
    public init(_ text: String, audio: [(name: String, samples: [Float])], channels: Int = 1) throws {
        temp = try TemporaryTestDirectory(prefix: "lockstep-show")
        for (name, samples) in audio {
            try FileFixtures.writeWAV(path: temp.file(name), samples: samples, format: StreamFormat(sampleRate: 48000, channelCount: 1))
        }
        try FileFixtures.writeText(path: temp.file("show.yaml"), text)
        let session = try Session.load(path: temp.file("show.yaml"))
        device = try OfflineDevice(format: StreamFormat(sampleRate: 48000, channelCount: channels), maximumFramesPerRender: 256)
        engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
        player = try SessionPlayer(session: session, engine: engine)
        try player.start(from: 0, at: 0)
    }

    /// Renders `frames` more frames, 256 at a time.
    public func render(_ frames: Int) throws {
        var left = frames
        while left > 0 {
            let n = min(256, left)
            output += try device.renderFloat(frames: n)
            left -= n
            afterEachBlock()
        }
    }

    /// Renders until ``output`` holds `count` frames.
    public func render(until count: Int) throws { try render(max(0, count - output.count / device.format.channelCount)) }

    /// Renders on a thread of its own, discarding the audio, until the returned loop is stopped:
    /// for commands that wait for the layers' buffers to come back (a pause, a seek while
    /// playing).
    public func renderInBackground() -> BackgroundRender {
        let render = BackgroundRender()
        let device = self.device
        Thread { [render] in
            while !render.stopping.load(ordering: .acquiring) { _ = try? device.renderFloat(frames: 256) }
            render.done.signal()
        }.start()
        return render
    }
}

/// A render loop on another thread (``OfflineShow/renderInBackground()``).
public final class BackgroundRender: Sendable {
    let stopping = Atomic<Bool>(false)
    let done = DispatchSemaphore(value: 0)

    /// Stops the loop and waits for it to end.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        done.wait()
    }
}
