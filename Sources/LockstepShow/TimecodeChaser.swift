import Foundation
import Lockstep
import LockstepJACK
import LockstepTimecode
import Synchronization

/// Incoming timecode, read off the realtime thread and turned into what a chasing session does
/// (``ChaseLock``): `session run --chase ltc:PORT` or `--chase mtc:PORT`.
///
/// - **LTC**: the device's audio input `in_1` is connected to the port; an input queue (the
///   process thread copies each cycle into a ring allocated beforehand, nothing more) hands the
///   samples with their device sample times to the engine's callback thread, where libltc's
///   decoder reads them (``LTCReader``): each frame's start is a device sample time.
/// - **MTC**: the device's MIDI input (``JACKDevice/midiInput``) is connected to the port; a thread
///   of its own reads the messages with their device sample times (``MTCReader``).
///
/// ``take()`` hands over what happened, for the show's thread to act on.
public final class TimecodeChaser: @unchecked Sendable {
    /// Where the timecode comes from.
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        /// LTC on a JACK audio port.
        case ltc(port: String)
        /// MIDI time code on a JACK MIDI port.
        case mtc(port: String)

        /// The port.
        public var port: String {
            switch self {
            case .ltc(let port), .mtc(let port): port
            }
        }

        /// `ltc:PORT` or `mtc:PORT`.
        public var description: String {
            switch self {
            case .ltc(let port): "ltc:\(port)"
            case .mtc(let port): "mtc:\(port)"
            }
        }
    }

    /// How to chase.
    public struct Setting: Sendable, Hashable {
        /// Where the timecode comes from.
        public var source: Source
        /// The rate (nil: as the timecode says — LTC's frame length and drop-frame bit, MTC's rate code).
        public var rate: TimecodeRate?
        /// The label of session time 0.
        public var start: Timecode
        /// Seconds added to the timecode's time: session time = timecode − start + offset.
        public var offsetSeconds: Double
        /// Frames a frame must be off the locked position to relocate.
        public var jumpFrames: Int
        /// Seconds it plays on after the timecode stops.
        public var freewheelSeconds: Double

        /// Creates a setting.
        public init(source: Source, rate: TimecodeRate?, start: Timecode, offsetSeconds: Double = 0, jumpFrames: Int = 1,
                    freewheelSeconds: Double = 0.2) {
            self.source = source
            self.rate = rate
            self.start = start
            self.offsetSeconds = offsetSeconds
            self.jumpFrames = jumpFrames
            self.freewheelSeconds = freewheelSeconds
        }
    }

    /// Something that happened: an action for the player, with the label read when there is one.
    public struct Happening: Sendable, Hashable {
        /// What to do or report.
        public var action: ChaseLock.Action
        /// The label of the frame that caused it (nil for a loss or a stop).
        public var timecode: Timecode?
    }

    /// The setting.
    public let setting: Setting
    private let device: JACKDevice
    private let engine: Engine
    private let sampleRate: Int
    private struct State {
        var lock: ChaseLock?
        var clock: TimecodeClock?
        var happenings: [Happening] = []
        var problem: String?
    }
    private let state = Mutex(State())
    private var queue: InputQueue?
    private var ltc: LTCReader?
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private var thread: Thread?

    /// Creates the chaser on `device` (not started: ``start()``).
    /// - Throws: ``TimecodeError`` for a start label the rate does not have.
    public init(setting: Setting, device: JACKDevice, engine: Engine) throws(TimecodeError) {
        self.setting = setting
        self.device = device
        self.engine = engine
        sampleRate = Int(engine.sampleRate.rounded())
        if let rate = setting.rate { try configure(rate: rate) }
    }

    /// Connects the port and starts reading.
    /// - Throws: ``AudioQueueError`` (no input, a port that cannot be connected, the queue).
    public func start() throws {
        switch setting.source {
        case .ltc(let port):
            guard let input = device.inputPortNames.first else {
                throw AudioQueueError(.invalidDevice, "LTC chase needs an audio input; open the device with one (inputChannelCount)")
            }
            try connect(port, to: input, option: "--chase ltc")
            ltc = try LTCReader(sampleRate: sampleRate)
            let format = StreamFormat(sampleRate: engine.sampleRate, channelCount: 1)
            let queue = try engine.makeInputQueue(format: format, name: "ltc-chase", channelMap: [0], ringSeconds: 2) { [weak self] queue, buffer, start, frames in
                self?.received(buffer, start: start, frames: frames)
                if !queue.isDisposed { try? queue.enqueue(buffer) }
            }
            let bytes = InputQueue.bufferByteSize(seconds: 0.005, format: format)
            for _ in 0..<32 { try queue.enqueue(try queue.allocateBuffer(byteCapacity: bytes)) }
            try queue.start()
            self.queue = queue
        case .mtc(let port):
            guard let input = device.midiInput else {
                throw AudioQueueError(.invalidDevice, "MTC chase needs a MIDI input; open the device with one (midiInputPortName)")
            }
            try connect(port, to: input.portName, option: "--chase mtc")
            let thread = Thread { [self] in readMTC(input) }
            thread.name = "lockstep.mtc-chase"
            self.thread = thread
            thread.start()
        }
    }

    /// Stops reading.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let queue {
            try? queue.stop(immediately: true)
            try? queue.dispose()
        }
        if thread != nil {
            device.midiInput?.interruptRead()
            done.wait()
        }
    }

    /// What happened since the last call, oldest first; and a problem to report once (a start
    /// label the timecode's rate does not have).
    public func take() -> (happenings: [Happening], problem: String?) {
        state.withLock { state in
            defer { state.happenings = []; state.problem = nil }
            return (state.happenings, state.problem)
        }
    }

    /// The rate chased (nil until known).
    public var rate: TimecodeRate? { state.withLock { $0.clock?.rate } }

    private func connect(_ port: String, to input: String, option: String) throws {
        do throws(AudioQueueError) { try device.connect(port, to: input) } catch {
            throw AudioQueueError(error.code, "\(option): \(error.message)")
        }
    }

    /// Sets the clock and the lock for `rate` (once).
    private func configure(rate: TimecodeRate) throws(TimecodeError) {
        let clock = try TimecodeClock(rate: rate, sampleRate: sampleRate, start: setting.start)
        let frame = Int64(clock.maximumFrameLength)
        let settings = ChaseLock.Settings(offset: Int64((setting.offsetSeconds * engine.sampleRate).rounded()),
                                          jump: Int64(setting.jumpFrames) * frame,
                                          freewheel: Int64((setting.freewheelSeconds * engine.sampleRate).rounded()))
        state.withLock { state in
            state.clock = clock
            state.lock = ChaseLock(settings: settings)
        }
    }

    /// A frame read, at `rate` as the timecode says; `length` in samples.
    private func sighted(_ label: Timecode, rate: TimecodeRate, at sampleTime: Int64, length: Int64) {
        if state.withLock({ $0.clock == nil }) {
            do throws(TimecodeError) { try configure(rate: rate) } catch {
                state.withLock { state in
                    if state.problem == nil { state.problem = "the timecode runs at \(rate) fps: \(error.message)" }
                }
                return
            }
        }
        state.withLock { state in
            guard let clock = state.clock, state.lock != nil else { return }
            let sighting = ChaseLock.Sighting(position: clock.position(of: label), sampleTime: sampleTime, length: length)
            for action in state.lock!.sighted(sighting) { state.happenings.append(Happening(action: action, timecode: label)) }
        }
    }

    /// Time heard up to `sampleTime`: a loss or a stop.
    private func heard(upTo sampleTime: Int64) {
        state.withLock { state in
            guard state.lock != nil else { return }
            for action in state.lock!.heard(upTo: sampleTime) { state.happenings.append(Happening(action: action, timecode: nil)) }
        }
    }

    /// An LTC buffer from the input queue (the engine's callback thread).
    private func received(_ buffer: QueueBuffer, start: Int64, frames: Int) {
        guard let ltc, frames > 0, !stopping.load(ordering: .acquiring) else { return }
        let samples = UnsafePointer(buffer.data.assumingMemoryBound(to: Float.self))
        for frame in ltc.write(samples, count: frames, at: start) {
            sighted(frame.timecode, rate: setting.rate ?? frame.rate(sampleRate: sampleRate), at: frame.sampleTime, length: frame.length)
        }
        heard(upTo: start + Int64(frames))
    }

    /// Reads MTC until stopped (its own thread).
    private func readMTC(_ input: JACKMIDIInput) {
        var reader = MTCReader()
        while !stopping.load(ordering: .acquiring) {
            for event in input.read(timeout: 0.02) {
                guard let frame = reader.read(event.bytes, at: event.sampleTime) else { continue }
                let rate = setting.rate ?? frame.rate
                // A frame is read every two frames (eight quarter-frames).
                let length = 2 * Int64((Double(sampleRate) * Double(rate.denominator) / Double(rate.numerator)).rounded())
                sighted(frame.timecode, rate: rate, at: frame.sampleTime, length: length)
            }
            heard(upTo: engine.currentTime().sampleTime - Int64(device.periodFrames))
        }
        done.signal()
    }
}
