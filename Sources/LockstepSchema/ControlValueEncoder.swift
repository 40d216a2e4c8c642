import Foundation

/// Encodes an `Encodable` straight into a ``ControlValue``: the value its JSON (as `JSONEncoder`
/// writes it, non-finite numbers as `"inf"`, `"-inf"`, `"nan"`) decodes to, without the JSON text
/// in between. A status of thousands of layers took seconds through text and a decoder that tries
/// each kind of value in turn; this takes milliseconds.
struct ControlValueEncoder {
    /// The value `value` encodes to.
    static func encode(_ value: some Encodable) throws -> ControlValue {
        let root = Node()
        try root.store(value, codingPath: [])
        return root.value
    }

    /// One value being built: a scalar, or an object or array whose members are still written.
    final class Node {
        var scalar: ControlValue?
        var members: [String: Node]?
        var elements: [Node]?

        /// What was written: an `Encodable` that writes nothing is an empty object, as in JSON.
        var value: ControlValue {
            if let elements { return .array(elements.map(\.value)) }
            if let members { return .object(members.mapValues(\.value)) }
            return scalar ?? .object([:])
        }

        /// Encodes `value` into this node, with the types `JSONEncoder` writes in its own way.
        func store(_ value: some Encodable, codingPath: [any CodingKey]) throws {
            switch value {
            case let data as Data: set(.string(data.base64EncodedString()))
            case let url as URL: set(.string(url.absoluteString))
            case let date as Date: set(ControlValueEncoder.number(date.timeIntervalSinceReferenceDate))
            default: try value.encode(to: NodeEncoder(node: self, codingPath: codingPath))
            }
        }

        func set(_ value: ControlValue) {
            (scalar, members, elements) = (value, nil, nil)
        }

        func makeObject() {
            if members == nil { (scalar, members, elements) = (nil, [:], nil) }
        }

        func makeArray() {
            if elements == nil { (scalar, members, elements) = (nil, nil, []) }
        }

        func member(_ key: String) -> Node {
            makeObject()
            if let node = members?[key] { return node }
            let node = Node()
            members?[key] = node
            return node
        }

        func appended() -> Node {
            makeArray()
            let node = Node()
            elements?.append(node)
            return node
        }
    }

    /// A double as its JSON text decodes: integral values as integers, non-finite as strings.
    static func number(_ value: Double) -> ControlValue {
        guard value.isFinite else { return .string(value.isNaN ? "nan" : value > 0 ? "inf" : "-inf") }
        if let whole = Int64(exactly: value) { return .integer(whole) }
        return .number(value)
    }

    /// A float as `JSONEncoder` writes it (its shortest decimal form), then read as a double.
    static func number(_ value: Float) -> ControlValue {
        guard value.isFinite else { return number(Double(value)) }
        return number(Double("\(value)") ?? Double(value))
    }

    static func integer<T: BinaryInteger>(_ value: T) -> ControlValue {
        if let exact = Int64(exactly: value) { return .integer(exact) }
        return number(Double(value))
    }

    struct NodeEncoder: Encoder {
        let node: Node
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            node.makeObject()
            return KeyedEncodingContainer(Keyed<Key>(node: node, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            node.makeArray()
            return Unkeyed(node: node, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: node, codingPath: codingPath) }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        mutating func encodeNil() throws { node.set(.null) }
        mutating func encode(_ value: Bool) throws { node.set(.bool(value)) }
        mutating func encode(_ value: String) throws { node.set(.string(value)) }
        mutating func encode(_ value: Double) throws { node.set(ControlValueEncoder.number(value)) }
        mutating func encode(_ value: Float) throws { node.set(ControlValueEncoder.number(value)) }
        mutating func encode(_ value: Int) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: Int8) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: Int16) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: Int32) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: Int64) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt8) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt16) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt32) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt64) throws { node.set(ControlValueEncoder.integer(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws { try node.store(value, codingPath: codingPath) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        let codingPath: [any CodingKey]

        func single(_ key: Key) -> Single { Single(node: node.member(key.stringValue), codingPath: codingPath + [key]) }
        mutating func encodeNil(forKey key: Key) throws { var s = single(key); try s.encodeNil() }
        mutating func encode(_ value: Bool, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: String, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: Double, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: Float, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: Int, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { var s = single(key); try s.encode(value) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try node.member(key.stringValue).store(value, codingPath: codingPath + [key])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                            forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.member("super"), codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        var count: Int { node.elements?.count ?? 0 }

        func single() -> Single { Single(node: node.appended(), codingPath: codingPath) }
        mutating func encodeNil() throws { var s = single(); try s.encodeNil() }
        mutating func encode(_ value: Bool) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: String) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: Double) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: Float) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: Int) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: Int8) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: Int16) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: Int32) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: Int64) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: UInt) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: UInt8) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: UInt16) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: UInt32) throws { var s = single(); try s.encode(value) }
        mutating func encode(_ value: UInt64) throws { var s = single(); try s.encode(value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try node.appended().store(value, codingPath: codingPath) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            NodeEncoder(node: node.appended(), codingPath: codingPath).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            NodeEncoder(node: node.appended(), codingPath: codingPath).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.appended(), codingPath: codingPath) }
    }
}
