import Foundation
import Lockstep
import LockstepFiles
import LockstepSession

/// Terminal helpers: progress bars on standard error when it is a terminal.
enum Terminal {
    /// Whether standard error is an interactive terminal.
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Draws a progress bar on standard error (terminals only).
    static func progress(_ fraction: Double, label: String) {
        guard stderrIsTerminal else { return }
        let width = 30
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let text = String(format: "\r%@ [%@] %3d%%", label, bar, Int((fraction * 100).rounded(.down)))
        FileHandle.standardError.write(Data(text.utf8))
        if fraction >= 1 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// Formats seconds as `m:ss.fff` (or `h:mm:ss.fff`).
    static func time(_ seconds: Double) -> String { SessionTime.clock(seconds) }

    /// Formats a dBFS value, `-inf` for silence.
    static func decibels(_ value: Float) -> String {
        value == -.infinity ? "-inf dBFS" : String(format: "%.2f dBFS", value)
    }
}

/// An encoding for summary lines: `WAV 32-bit float`, `FLAC 24-bit integer`, `AU µ-law`, `MP3`,
/// `Ogg Vorbis`.
func encodingSummary(_ encoding: AudioFileEncoding) -> String {
    encoding.sampleFormat.map { "\(encoding.type) \($0)" } ?? encoding.type.description
}

/// Parses a gain such as `-6`, `-6dB`, `+3 dB` or `-inf` (at most +12 dB), as session files do.
func parseGain(_ text: String) -> Double? { SessionGain.parse(text) }
