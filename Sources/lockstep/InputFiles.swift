import Foundation
import Lockstep
import LockstepFiles
import Logging

/// Checks on a command's input and output files that come before any work: `-` given once, the
/// inputs' headers (reported with `--verbose`), rates the converter can reach, and standard
/// output able to carry the output.
enum InputFiles {
    /// Refuses `-` (standard input) more than once among `paths`: standard input can be read once.
    /// - Throws: ``CLIError`` (exit status 64).
    static func checkStandardInput(_ paths: [String], command: String) throws {
        let count = paths.filter(StandardStreams.names).count
        guard count > 1 else { return }
        throw CLIError(message: "\(command): '-' (standard input) is given \(count) times; standard input can be read once: give '-' for one file and name the others", exitCode: 64)
    }

    /// Refuses an output to standard output that it cannot carry (a terminal; AIFF, W64 or RF64
    /// on a pipe), and `--json` with it (standard output carries the audio).
    /// - Throws: ``CLIError`` (exit status 64).
    static func checkStandardOutput(_ path: String, encoding: AudioFileEncoding, json: Bool = false, command: String) throws {
        guard StandardStreams.names(path) else { return }
        if json {
            throw CLIError(message: "\(command): --json prints on standard output, which carries the audio with -o -; leave --json out (the summary goes to standard error)", exitCode: 64)
        }
        do { try StandardStreams.checkOutput(encoding.type) } catch {
            throw CLIError(message: "\(command): \(error.description)", exitCode: 64)
        }
    }

    /// The sample rate of each input that opens (the others are reported by the command itself
    /// when it opens them), each described at the `.info` level (`--verbose`).
    static func describe(_ paths: [String]) -> [(path: String, rate: Double)] {
        paths.compactMap { path -> (path: String, rate: Double)? in
            guard let reader = try? AudioFileReader(path: path, warnings: FileWarnings()) else { return nil }
            defer { reader.close() }
            let length = reader.lengthIsKnown ? "\(reader.frameCount) frames (\(Terminal.time(reader.duration)))"
                : "a stream, read as it arrives (its length is known at its end)"
            log.info("\(path): \(reader.containerName), \(reader.codecName), \(Int(reader.format.sampleRate)) Hz, \(reader.format.channelCount) ch, \(length)")
            return (path, reader.format.sampleRate)
        }
    }

    /// Refuses an output rate that a file's rate cannot be converted to: libsoxr converts between
    /// rates at most ``SoxrRateConverter/supportedRatios`` apart (256 times).
    /// - Parameters:
    ///   - option: how the rate was given (`--rate 1`, `the session's rate 8000`), for the message.
    /// - Throws: ``CLIError`` (exit status 64) naming the file and the rates that work.
    static func checkRates(_ files: [(path: String, rate: Double)], outputRate: Double, option: String, command: String) throws {
        let ratios = SoxrRateConverter.supportedRatios
        for file in files where !ratios.contains(outputRate / file.rate) {
            let lowest = Int((files.map(\.rate).max()! * ratios.lowerBound).rounded(.up))
            let highest = min(768_000, Int((files.map(\.rate).min()! * ratios.upperBound).rounded(.down)))
            let range = lowest <= highest ? "give a rate from \(lowest) to \(highest) Hz" : "convert the files to closer rates first"
            throw CLIError(message: "\(command): \(file.path): its \(Int(file.rate)) Hz cannot be converted to \(option) Hz (libsoxr converts between rates at most 256 times apart); \(range)", exitCode: 64)
        }
    }
}
