import ArgumentParser
import Foundation
import Lockstep
import LockstepFiles

/// `lockstep info`: describes audio files.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show the format, rate, channels, length and peak of audio files.",
        discussion: """
            With --json, prints one JSON object per file, one per line. The peak is that of the \
            finite samples: NaN or infinite samples in a float file read as silence, and their count \
            is shown (and warned about). A file whose data ends inside a frame shows the bytes ignored.
            """
    )

    @Argument(help: "The audio files to describe.")
    var files: [String] = []

    @Flag(help: "Print JSON (one object per file, one per line) instead of text.")
    var json = false

    struct Report: Encodable {
        var file: String
        var container: String
        var encoding: String
        var sampleFormat: String
        var sampleRate: Int
        var channels: Int
        var frames: Int64
        var duration: Double
        var peak: Double
        var peakDB: Double?
        /// NaN or infinite samples, read as silence (and left out of the peak).
        var nonFiniteSamples: Int64
        /// Bytes of a partial frame at the end of the data, ignored.
        var partialFrameBytes: Int
    }

    func run() throws {
        guard !files.isEmpty else {
            throw CLIError(message: "info: no input files; give one or more audio files", exitCode: 64)
        }
        var failures: [String] = []
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for path in files {
            do {
                let reader = try AudioFileReader(path: path, truncation: .reject)
                let scan = try reader.scanPeak()
                if let error = reader.truncationError { throw error }
                guard scan.frames > 0 else {
                    throw FileError(.emptyFile, path: path,
                        problem: "the header is valid but the file holds no audio frames (\(reader.containerName), \(Int(reader.format.sampleRate)) Hz, \(reader.format.channelCount) ch); re-export or re-record it")
                }
                // The reader reads non-finite samples as 0, so the peak is finite; a guard all the same,
                // as JSON cannot carry NaN.
                let peak = scan.peak.isFinite ? scan.peak : 0
                let peakDB = Decibels.fromLinear(peak)
                let report = Report(file: path, container: reader.containerName, encoding: reader.encodingName,
                                    sampleFormat: reader.format.sampleFormat.rawValue,
                                    sampleRate: Int(reader.format.sampleRate), channels: reader.format.channelCount,
                                    frames: scan.frames, duration: Double(scan.frames) / reader.format.sampleRate,
                                    peak: Double(peak), peakDB: peakDB.isFinite ? Double(peakDB) : nil,
                                    nonFiniteSamples: reader.nonFiniteSampleCount,
                                    partialFrameBytes: reader.partialFrameByteCount)
                if json {
                    let data = try encoder.encode(report)
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    var line = "\(path): \(report.container), \(report.encoding), \(report.sampleRate) Hz, "
                        + "\(report.channels) ch, \(report.frames) frames, \(Terminal.time(report.duration)), "
                        + "peak \(Terminal.decibels(peakDB))"
                    if report.nonFiniteSamples > 0 {
                        line += ", \(report.nonFiniteSamples) non-finite \(report.nonFiniteSamples == 1 ? "sample" : "samples") (read as silence)"
                    }
                    if report.partialFrameBytes > 0 {
                        line += ", ends inside a frame (\(report.partialFrameBytes) \(report.partialFrameBytes == 1 ? "byte" : "bytes") ignored)"
                    }
                    print(line)
                }
            } catch let error as FileError {
                failures.append(error.description)
            } catch {
                failures.append("\(path): \(error)")
            }
        }
        for failure in failures {
            FileHandle.standardError.write(Data("lockstep: info: \(failure)\n".utf8))
        }
        if !failures.isEmpty { throw ExitCode(1) }
    }
}
