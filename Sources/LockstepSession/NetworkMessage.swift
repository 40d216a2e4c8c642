/// The OSC message a network cue sends (`message:`), as written: an address and arguments,
/// separated by spaces (`/cue/12/go`, `/fader/1 0.5`, `/label "house open" 3`). A whole number is
/// an `i` (32-bit integer), a number with a point or an exponent an `f` (32-bit float), anything
/// else — or anything in double quotes — an `s` (string).
public struct NetworkMessage: Sendable, Hashable, CustomStringConvertible {
    /// One argument.
    public enum Argument: Sendable, Hashable {
        /// An OSC `i`.
        case int(Int32)
        /// An OSC `f`.
        case float(Float)
        /// An OSC `s`.
        case string(String)
    }

    /// The OSC address (starts with `/`).
    public var address: String
    /// The arguments, in order.
    public var arguments: [Argument]

    /// The most arguments a message takes.
    public static let maximumArguments = 64

    /// Parses `text`.
    /// - Throws: a message saying what is wrong and how to write it.
    public static func parse(_ text: String) throws(NetworkMessageError) -> NetworkMessage {
        var words: [(String, quoted: Bool)] = []
        var current = "", quoted = false, inQuotes = false, started = false
        for character in text {
            if character == "\"" {
                inQuotes.toggle()
                quoted = true
                started = true
            } else if character.isWhitespace && !inQuotes {
                if started { words.append((current, quoted)) }
                current = ""
                quoted = false
                started = false
            } else {
                current.append(character)
                started = true
            }
        }
        guard !inQuotes else { throw NetworkMessageError("'\(text)' has a quote that does not close; close it with \"") }
        if started { words.append((current, quoted)) }
        guard let (address, _) = words.first, address.hasPrefix("/"), !address.contains(where: { "#*,?[]{}".contains($0) }) else {
            throw NetworkMessageError("'\(text)' does not start with an OSC address; write e.g. /cue/12/go or \"/fader/1 0.5\"")
        }
        guard words.count - 1 <= maximumArguments else {
            throw NetworkMessageError("'\(text.prefix(60))…' has \(words.count - 1) arguments; a message takes at most \(maximumArguments)")
        }
        let arguments = words.dropFirst().map { word, quoted -> Argument in
            if !quoted, let value = Int32(word) { return .int(value) }
            if !quoted, word.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let value = Float(word), value.isFinite {
                return .float(value)
            }
            return .string(word)
        }
        return NetworkMessage(address: address, arguments: arguments)
    }

    /// The message as written back (strings with spaces in quotes).
    public var description: String {
        ([address] + arguments.map { argument in
            switch argument {
            case .int(let value): return String(value)
            case .float(let value): return String(value)
            case .string(let text): return text.contains(where: \.isWhitespace) || text.isEmpty || Int32(text) != nil || Float(text) != nil
                ? "\"\(text)\"" : text
            }
        }).joined(separator: " ")
    }
}

/// Why a network cue's `message` cannot be read.
public struct NetworkMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and how to write it.
    public var message: String
    init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
