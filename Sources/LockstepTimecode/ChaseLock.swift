/// Where incoming timecode says the session is, turned into what a chasing player does: the
/// logic of `session run --chase`, on sample times alone (no device, no thread), so a test can
/// drive it frame by frame.
///
/// Feed it every frame read (``sighted(_:)``: a label's session position and the sample time
/// it started on) and the time heard so far (``heard(upTo:)``). It locks once two frames in a
/// row agree (the second follows the first by exactly its samples, within ``Settings/jump``),
/// and then asks for a ``Action/locate(position:sampleTime:)``: session sample `position` plays
/// on device sample `sampleTime` — timecode position plus ``Settings/offset``. While locked a frame
/// off the expected position by ``Settings/jump`` or more, confirmed by the frame after it, is a
/// jump (a new locate); a smaller difference is left alone (on the same clock there is none).
/// With no frame for two frame lengths it reports the loss and freewheels; after
/// ``Settings/freewheel`` samples more it asks for a ``Action/stop(position:sampleTime:)``.
public struct ChaseLock: Sendable {
    /// How it chases.
    public struct Settings: Sendable, Hashable {
        /// Samples added to the timecode's position: session sample = timecode sample + offset.
        public var offset: Int64
        /// How far (samples) a frame must be off the locked position to relocate.
        public var jump: Int64
        /// How long (samples) it plays on after the timecode stops, before it stops too.
        public var freewheel: Int64

        /// Creates settings.
        public init(offset: Int64 = 0, jump: Int64, freewheel: Int64) {
            self.offset = offset
            self.jump = max(1, jump)
            self.freewheel = max(0, freewheel)
        }
    }

    /// One frame of incoming timecode.
    public struct Sighting: Sendable, Hashable {
        /// The session position of the frame's first sample (the label minus the session's
        /// timecode start, in samples; before the offset).
        public var position: Int64
        /// The device sample time it started on.
        public var sampleTime: Int64
        /// Its length in samples.
        public var length: Int64

        /// Creates a sighting.
        public init(position: Int64, sampleTime: Int64, length: Int64) {
            self.position = position
            self.sampleTime = sampleTime
            self.length = length
        }
    }

    /// What the player is to do, and what is reported.
    public enum Action: Sendable, Hashable {
        /// Locked: the timecode runs (session sample `position` on `sampleTime`).
        case lock(position: Int64, sampleTime: Int64)
        /// The timecode jumped from where it was expected (`from`) to `position`, on `sampleTime`.
        case jump(from: Int64, position: Int64, sampleTime: Int64)
        /// Locate: session sample `position` plays on device sample `sampleTime` (play every layer
        /// from there, on this mapping).
        case locate(position: Int64, sampleTime: Int64)
        /// No timecode since `sampleTime` (where session sample `position` played): freewheeling.
        case loss(position: Int64, sampleTime: Int64)
        /// The timecode stopped: stop, at session sample `position` (that of `sampleTime`).
        case stop(position: Int64, sampleTime: Int64)
    }

    /// The settings.
    public let settings: Settings
    /// The mapping locked to: session sample `position` plays on `sampleTime` (nil: not locked).
    public private(set) var mapping: (position: Int64, sampleTime: Int64)?
    /// The previous frame read (to confirm a lock or a jump with).
    private var previous: Sighting?
    /// The end (sample time) of the last frame that agreed with the mapping.
    private var lastHeard: Int64 = 0
    private var lastLength: Int64 = 0
    private var isLost = false

    /// Creates an unlocked chase.
    public init(settings: Settings) { self.settings = settings }

    /// Whether it is locked (playing to the timecode, freewheeling included).
    public var isLocked: Bool { mapping != nil }

    /// Takes one frame read; returns what to do.
    public mutating func sighted(_ sighting: Sighting) -> [Action] {
        defer { previous = sighting }
        let position = sighting.position + settings.offset
        let agreesWithPrevious = previous.map { abs((sighting.position - $0.position) - (sighting.sampleTime - $0.sampleTime)) < settings.jump
                                                && sighting.sampleTime > $0.sampleTime } ?? false
        guard let mapping else {
            guard agreesWithPrevious else { return [] }
            self.mapping = (position, sighting.sampleTime)
            heard(sighting)
            return [.lock(position: position, sampleTime: sighting.sampleTime), .locate(position: position, sampleTime: sighting.sampleTime)]
        }
        let expected = mapping.position + sighting.sampleTime - mapping.sampleTime
        if abs(position - expected) < settings.jump {
            let wasLost = isLost
            heard(sighting)
            return wasLost ? [.lock(position: expected, sampleTime: sighting.sampleTime)] : []
        }
        // Off the mapping: a jump once the frame after it agrees with it.
        guard agreesWithPrevious else { return [] }
        self.mapping = (position, sighting.sampleTime)
        heard(sighting)
        return [.jump(from: expected, position: position, sampleTime: sighting.sampleTime),
                .locate(position: position, sampleTime: sighting.sampleTime)]
    }

    /// Time heard up to device sample `sampleTime` (silence or not): reports a loss after two
    /// frames without timecode, and asks to stop once ``Settings/freewheel`` has passed too.
    public mutating func heard(upTo sampleTime: Int64) -> [Action] {
        guard let mapping else { return [] }
        let silence = sampleTime - lastHeard
        let at = { (time: Int64) in (mapping.position + time - mapping.sampleTime, time) }
        if silence >= 2 * lastLength + settings.freewheel {
            self.mapping = nil
            previous = nil
            isLost = false
            let (position, time) = at(lastHeard + settings.freewheel)
            return [.stop(position: position, sampleTime: time)]
        }
        if !isLost && silence >= 2 * lastLength {
            isLost = true
            let (position, time) = at(lastHeard)
            return [.loss(position: position, sampleTime: time)]
        }
        return []
    }

    private mutating func heard(_ sighting: Sighting) {
        lastHeard = sighting.sampleTime + sighting.length
        lastLength = sighting.length
        isLost = false
    }
}

extension TimecodeClock {
    /// The session position (samples) of the first sample of the frame labelled `label` — before
    /// the start, negative; labels more than 12 hours before the start count as after it,
    /// across midnight.
    public func position(of label: Timecode) -> Int64 {
        let day = rate.framesPerDay
        var frame = ((label.frameNumber(at: rate) - start.frameNumber(at: rate)) % day + day) % day
        if frame >= day / 2 { frame -= day }
        return frame >= 0 ? startSample(ofFrame: frame) : -startSample(ofFrame: -frame)
    }
}
