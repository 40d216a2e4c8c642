/// A SMPTE timecode label, `HH:MM:SS:FF`, valid at a ``TimecodeRate``.
///
/// Labels and frame counts convert both ways (``frameNumber(at:)``, ``init(frameNumber:rate:)``);
/// drop-frame labels (29.97df) skip frames 00 and 01 at each minute except every tenth.
public struct Timecode: Hashable, Sendable, CustomStringConvertible {
    /// Hours, 0–23.
    public var hours: Int
    /// Minutes, 0–59.
    public var minutes: Int
    /// Seconds, 0–59.
    public var seconds: Int
    /// Frames, 0 to the rate's frames per second − 1.
    public var frames: Int

    /// Creates a label; no checks (``validated(at:)`` checks one against a rate).
    public init(hours: Int, minutes: Int, seconds: Int, frames: Int) {
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
        self.frames = frames
    }

    /// Parses `HH:MM:SS:FF` (`;` or `.` before the frames too, as drop-frame is often written)
    /// and checks it at `rate`.
    /// - Throws: ``TimecodeError`` saying which field is out of range.
    public init(parsing text: String, rate: TimecodeRate) throws(TimecodeError) {
        let fields = text.split(omittingEmptySubsequences: false) { $0 == ":" || $0 == ";" || $0 == "." }
        guard fields.count == 4, fields.allSatisfy({ !$0.isEmpty && $0.count <= 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            throw TimecodeError("'\(text)' is not a timecode; write HH:MM:SS:FF, e.g. 01:00:00:00")
        }
        let values = fields.map { Int($0)! }
        self.init(hours: values[0], minutes: values[1], seconds: values[2], frames: values[3])
        try validate(at: rate, text: text)
    }

    /// Checks the fields at `rate`.
    /// - Throws: ``TimecodeError`` for a field out of range or a frame drop-frame skips.
    public func validate(at rate: TimecodeRate, text: String? = nil) throws(TimecodeError) {
        let name = "'\(text ?? description)'"
        guard (0..<24).contains(hours) else { throw TimecodeError("\(name): hours must be 00 to 23") }
        guard (0..<60).contains(minutes) else { throw TimecodeError("\(name): minutes must be 00 to 59") }
        guard (0..<60).contains(seconds) else { throw TimecodeError("\(name): seconds must be 00 to 59") }
        guard (0..<rate.nominalFramesPerSecond).contains(frames) else {
            throw TimecodeError("\(name): frames must be 00 to \(rate.nominalFramesPerSecond - 1) at \(rate) fps")
        }
        if rate.isDropFrame && seconds == 0 && frames < 2 && minutes % 10 != 0 {
            throw TimecodeError("\(name) does not exist at 29.97df: frames 00 and 01 are dropped at the start of every minute but each tenth; give frame 02")
        }
    }

    /// The number of frames from 00:00:00:00 to this label at `rate` (the label must be valid).
    public func frameNumber(at rate: TimecodeRate) -> Int64 {
        let fps = Int64(rate.nominalFramesPerSecond)
        let totalMinutes = Int64(hours * 60 + minutes)
        let count = (totalMinutes * 60 + Int64(seconds)) * fps + Int64(frames)
        guard rate.isDropFrame else { return count }
        return count - 2 * (totalMinutes - totalMinutes / 10)
    }

    /// The label of frame `frameNumber` counted from 00:00:00:00 at `rate`, wrapped at 24 hours.
    public init(frameNumber: Int64, rate: TimecodeRate) {
        let day = rate.framesPerDay
        var count = ((frameNumber % day) + day) % day
        if rate.isDropFrame {
            // Back to a count of 30 fps labels: 18 labels skipped per whole ten minutes, 2 per
            // minute after the first of the ten.
            let tens = count / 17_982, rest = count % 17_982
            count += 18 * tens + (rest > 1 ? 2 * ((rest - 2) / 1_798) : 0)
        }
        let fps = Int64(rate.nominalFramesPerSecond)
        frames = Int(count % fps)
        let totalSeconds = count / fps
        seconds = Int(totalSeconds % 60)
        minutes = Int(totalSeconds / 60 % 60)
        hours = Int(totalSeconds / 3_600)
    }

    /// `HH:MM:SS:FF`.
    public var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(hours)):\(two(minutes)):\(two(seconds)):\(two(frames))"
    }
}
