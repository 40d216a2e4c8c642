/// Carries a value the caller knows may cross threads (C pointers handed to a callback, a user's
/// block run on its dispatch queue): the one `@unchecked Sendable` box of this target.
///
/// Wrap a value only where Apple's API hands it to another thread as it is; the box checks nothing.
package struct Unchecked<Value>: @unchecked Sendable {
    /// The value.
    package let value: Value
    /// Boxes `value`.
    package init(_ value: Value) { self.value = value }
}
