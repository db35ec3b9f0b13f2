"""The data and static figures of the book's interactive panels."""
