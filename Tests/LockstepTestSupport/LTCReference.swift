import Foundation

/// Reference LTC for the chase tests, made by `Tests/Fixtures/ltc-encode.c` with libltc's encoder
/// alone (none of Lockstep's timecode code): 25 fps at 48 kHz, frame k on samples 1920 k ..< 1920 (k + 1).
public enum LTCReference {
    /// Samples per frame (48 kHz, 25 fps).
    public static let frameLength = 1920

    /// `frames` frames of LTC labelled from `hours:minutes:seconds:frame`, as mono samples.
    public static func samples(hours: Int, minutes: Int, seconds: Int, frame: Int, frames: Int, in directory: String) throws -> [Float] {
        let path = (directory as NSString).appendingPathComponent("reference-ltc.raw")
        let result = try CLI.run([path, String(hours), String(minutes), String(seconds), String(frame), String(frames)],
                                 timeout: 60, executable: try FixtureProgram.compiled("ltc-encode"))
        guard result.status == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "ltc-encode: \(result.stderr)"])
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
