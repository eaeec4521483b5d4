//! What an external sorter ([`super::sorter`]) asks of its records: to be written to a
//! segment and read back.

/// A record an external sorter can write to a segment and read back.
pub trait Sortable: Sized {
    /// Writes the record.
    fn encode<W: std::io::Write>(&self, writer: &mut W) -> std::io::Result<()>;

    /// Reads a record; `UnexpectedEof` where the segment has ended (before its first byte).
    fn decode<R: std::io::Read>(reader: &mut R) -> std::io::Result<Self>;
}
