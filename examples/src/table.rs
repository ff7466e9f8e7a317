//! Aligned text tables for people: a header, a rule, and rows, each column as wide as its
//! widest cell (counted in characters); cells that look like numbers are right-aligned.

/// Renders `headers` over `rows` (every row as long as `headers`; missing cells are blank).
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .chain([h.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let numeric =
        |c: &str| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_digit() || ".-+e".contains(ch));
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, &w)| {
                let pad = " ".repeat(w.saturating_sub(c.chars().count()));
                if numeric(c) { format!("{pad}{c}") } else { format!("{c}{pad}") }
            })
            .collect();
        format!("| {} |", padded.join(" | "))
    };
    let mut out = line(headers.to_vec());
    out.push('\n');
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    out.push_str(&format!("|-{}-|\n", rule.join("-|-")));
    for r in rows {
        let cells: Vec<&str> =
            (0..headers.len()).map(|i| r.get(i).map_or("", String::as_str)).collect();
        out.push_str(&line(cells));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_numbers_go_right() {
        let rows = vec![
            vec!["N".to_owned(), "12.50".to_owned()],
            vec!["long text".to_owned(), "3".to_owned()],
            vec!["short".to_owned()],
        ];
        assert_eq!(
            render(&["flag", "sum"], &rows),
            "| flag      | sum   |\n\
             |-----------|-------|\n\
             | N         | 12.50 |\n\
             | long text |     3 |\n\
             | short     |       |\n"
        );
    }
}
