// What the Audio Queue examples share that is not part of the ported listings: their command
// lines and their error reporting.
import AudioQueueCompat
import Foundation

/// The command line of an example: `--name value` options, then positional arguments.
public struct ExampleArguments {
    /// What is left once the options have been taken.
    public private(set) var positional: [String]

    /// Reads the process's arguments.
    public init() { positional = Array(CommandLine.arguments.dropFirst()) }

    /// Removes the first `--name value` pair and returns the value; nil when absent.
    public mutating func option(_ name: String) -> String? {
        guard let index = positional.firstIndex(of: name), index + 1 < positional.count else { return nil }
        defer { positional.removeSubrange(index...(index + 1)) }
        return positional[index + 1]
    }
}

/// The example's name, for messages.
public var exampleName: String { URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent }

/// Prints `message` (prefixed with the example's name) to standard error and exits with `code`.
public func exitWithMessage(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("\(exampleName): \(message)\n".utf8))
    exit(code)
}

/// Exits with what failed and why (``AudioQueueCompatLastErrorMessage()``) unless `status` is `noErr`.
public func check(_ status: OSStatus, _ what: String) {
    guard status != noErr else { return }
    exitWithMessage("\(what) failed: \(AudioQueueCompatLastErrorMessage() ?? String(status))")
}
