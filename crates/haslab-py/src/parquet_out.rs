//! The trace tables as Parquet files, written without Python's pyarrow: the files `haslab run`
//! writes, equal in content to what `Result.save` writes (pandas, pyarrow).
//!
//! Each file has one row group and the columns of `api.trace_columns`: the table's columns in
//! order (unsigned integers as int64, an error beyond int64; floats as double), then the name
//! columns (`flow_name`, `link_name`, `player_name`; `time_s` and `buffer_s` for the players
//! table; `source_name`), every field nullable without nulls, zstd-compressed, with the Arrow
//! schema in the file's metadata. A name column is an Arrow `dictionary<int32, string>` whose
//! dictionary is the full list of names (flows, link directions, players or traffic generators,
//! used or not, in summary order), as pandas' categories are: the Arrow writer of the `parquet`
//! crate re-encodes a dictionary with only the values used, in order of appearance, so that
//! column's pages (a PLAIN dictionary page and an RLE_DICTIONARY data page) are encoded here.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use haslab_core::metrics::{ColumnData, SimResult, Table};
use parquet::arrow::arrow_writer::compute_leaves;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, PageType, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// One column of a trace file.
enum Col {
    I64(Vec<i64>),
    F64(Vec<f64>),
    /// A name column: codes into the names.
    Names(Vec<i32>, Vec<String>),
}

impl Col {
    fn data_type(&self) -> DataType {
        match self {
            Col::I64(_) => DataType::Int64,
            Col::F64(_) => DataType::Float64,
            Col::Names(..) => {
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
            }
        }
    }
}

/// Writes every table of `result` as `<table>.parquet` in `out_dir`, in name order, and
/// returns the file names.
pub fn write_traces(result: &SimResult, out_dir: &Path) -> Result<Vec<String>, String> {
    let mut tables: Vec<&Table> = result.tables.iter().collect();
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    let mut written = Vec::with_capacity(tables.len());
    for table in tables {
        let name = format!("{}.parquet", table.name);
        let cols = trace_columns(table, result)?;
        let path = out_dir.join(&name);
        write_file(cols, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(name);
    }
    Ok(written)
}

/// The columns of a trace in file order (as `haslab.api.trace_columns`).
fn trace_columns(table: &Table, result: &SimResult) -> Result<Vec<(String, Col)>, String> {
    let mut cols: Vec<(String, Col)> = Vec::with_capacity(table.columns.len() + 3);
    for (col, data) in &table.columns {
        let c = match data {
            ColumnData::U64(v) => Col::I64(
                v.iter()
                    .map(|&x| {
                        i64::try_from(x).map_err(|_| {
                            format!(
                                "trace {}.{col}: value {x} does not fit a signed 64-bit column",
                                table.name
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            ColumnData::U32(v) => Col::I64(v.iter().map(|&x| i64::from(x)).collect()),
            ColumnData::F64(v) => Col::F64(v.clone()),
        };
        cols.push((col.clone(), c));
    }
    let sections: [(&str, &str, Vec<String>); 3] = [
        (
            "flow",
            "flow_name",
            result.flows.iter().map(|f| f.name.clone()).collect(),
        ),
        (
            "link",
            "link_name",
            result.links.iter().map(|l| l.name.clone()).collect(),
        ),
        (
            "player",
            "player_name",
            result.players.iter().map(|p| p.name.clone()).collect(),
        ),
    ];
    for (code_col, named, names) in sections {
        if let Some(codes) = codes_of(table, code_col, &names)? {
            cols.push((named.to_string(), Col::Names(codes, names)));
        }
    }
    if table.name == "players" {
        for (from, to) in [("time_ns", "time_s"), ("buffer_ns", "buffer_s")] {
            if let Some(i) = cols.iter().position(|(n, _)| n == from) {
                let secs = match &cols[i].1 {
                    Col::I64(v) => v.iter().map(|&x| x as f64 / 1e9).collect(),
                    Col::F64(v) => v.iter().map(|&x| x / 1e9).collect(),
                    Col::Names(..) => unreachable!("a table column is never a name column"),
                };
                cols.push((to.to_string(), Col::F64(secs)));
            }
        }
    }
    let sources: Vec<String> = result.traffic.iter().map(|t| t.name.clone()).collect();
    if let Some(codes) = codes_of(table, "source", &sources)? {
        cols.push(("source_name".to_string(), Col::Names(codes, sources)));
    }
    Ok(cols)
}

/// The codes of column `col` of `table` as int32, each checked to index `names`; None when the
/// table has no such column.
fn codes_of(table: &Table, col: &str, names: &[String]) -> Result<Option<Vec<i32>>, String> {
    let Some(data) = table.column(col) else {
        return Ok(None);
    };
    let check = |x: u64| -> Result<i32, String> {
        if x < names.len() as u64 {
            Ok(x as i32)
        } else {
            Err(format!(
                "trace {}.{col}: code {x} names none of the {} entries of the summary",
                table.name,
                names.len()
            ))
        }
    };
    let codes = match data {
        ColumnData::U64(v) => v.iter().map(|&x| check(x)).collect::<Result<_, _>>()?,
        ColumnData::U32(v) => v
            .iter()
            .map(|&x| check(u64::from(x)))
            .collect::<Result<_, _>>()?,
        ColumnData::F64(_) => {
            return Err(format!(
                "trace {}.{col}: a code column of floats",
                table.name
            ))
        }
    };
    Ok(Some(codes))
}

fn parquet_err(e: parquet::errors::ParquetError) -> String {
    e.to_string()
}

/// Writes the columns as one Parquet file with one row group (the columns move into the
/// Arrow arrays, no copy).
fn write_file(cols: Vec<(String, Col)>, path: &Path) -> Result<(), String> {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(name, c)| Field::new(name, c.data_type(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_statistics_enabled(EnabledStatistics::None)
        .build();
    let file = File::create(path).map_err(|e| e.to_string())?;
    // the Arrow writer converts the schema and records it in the file's metadata
    let (mut writer, factory) =
        ArrowWriter::try_new(BufWriter::new(file), schema.clone(), Some(props))
            .and_then(|w| w.into_serialized_writer())
            .map_err(parquet_err)?;
    let parquet_schema = writer.schema_descr().clone();
    let mut arrow_writers = factory.create_column_writers(0).map_err(parquet_err)?;
    let mut row_group = writer.next_row_group().map_err(parquet_err)?;
    for (i, ((_, col), mut column_writer)) in
        cols.into_iter().zip(arrow_writers.drain(..)).enumerate()
    {
        let array: ArrayRef = match col {
            Col::Names(codes, names) => {
                drop(column_writer);
                let descr = parquet_schema.column(i);
                let (bytes, close) = names_chunk(descr, &codes, &names).map_err(parquet_err)?;
                row_group
                    .append_column(&bytes, close)
                    .map_err(parquet_err)?;
                continue;
            }
            Col::I64(v) => Arc::new(Int64Array::from(v)),
            Col::F64(v) => Arc::new(Float64Array::from(v)),
        };
        for leaf in compute_leaves(schema.field(i), &array).map_err(parquet_err)? {
            column_writer.write(&leaf).map_err(parquet_err)?;
        }
        column_writer
            .close()
            .map_err(parquet_err)?
            .append_to_row_group(&mut row_group)
            .map_err(parquet_err)?;
    }
    row_group.close().map_err(parquet_err)?;
    writer.close().map_err(parquet_err)?;
    Ok(())
}

/// A name column's chunk, uncompressed: a PLAIN dictionary page holding every name, then one
/// RLE_DICTIONARY data page (definition levels all 1: no nulls) holding the codes.
fn names_chunk(
    descr: ColumnDescPtr,
    codes: &[i32],
    names: &[String],
) -> parquet::errors::Result<(Bytes, ColumnCloseResult)> {
    let mut dict = Vec::new();
    for n in names {
        dict.extend_from_slice(&(n.len() as u32).to_le_bytes());
        dict.extend_from_slice(n.as_bytes());
    }
    // the codes: bit width, then RLE runs
    let width = (32 - (names.len().max(2) as u32 - 1).leading_zeros()) as u8;
    let mut data = Vec::new();
    // definition levels (max level 1): a 4-byte length, then one RLE run of 1s of bit width 1
    let mut levels = Vec::new();
    if !codes.is_empty() {
        rle_run(&mut levels, codes.len(), 1, 1);
    }
    data.extend_from_slice(&(levels.len() as u32).to_le_bytes());
    data.extend_from_slice(&levels);
    data.push(width);
    let mut i = 0;
    while i < codes.len() {
        let mut j = i + 1;
        while j < codes.len() && codes[j] == codes[i] {
            j += 1;
        }
        rle_run(&mut data, j - i, codes[i] as u32, width);
        i = j;
    }

    let mut sink = TrackedWrite::new(Vec::new());
    let (dict_spec, data_spec) = {
        let mut pages = SerializedPageWriter::new(&mut sink);
        let dict_len = dict.len();
        let dict_spec = pages.write_page(CompressedPage::new(
            Page::DictionaryPage {
                buf: Bytes::from(dict),
                num_values: names.len() as u32,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            },
            dict_len,
        ))?;
        let data_len = data.len();
        let data_spec = pages.write_page(CompressedPage::new(
            Page::DataPage {
                buf: Bytes::from(data),
                num_values: codes.len() as u32,
                encoding: Encoding::RLE_DICTIONARY,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            },
            data_len,
        ))?;
        pages.close()?;
        (dict_spec, data_spec)
    };
    debug_assert_eq!(dict_spec.page_type, PageType::DICTIONARY_PAGE);
    let bytes = Bytes::from(sink.into_inner()?);
    let total = bytes.len() as i64;
    let metadata = ColumnChunkMetaData::builder(descr)
        .set_encodings(vec![
            Encoding::PLAIN,
            Encoding::RLE,
            Encoding::RLE_DICTIONARY,
        ])
        .set_num_values(codes.len() as i64)
        .set_compression(Compression::UNCOMPRESSED)
        .set_total_compressed_size(total)
        .set_total_uncompressed_size(total)
        .set_dictionary_page_offset(Some(dict_spec.offset as i64))
        .set_data_page_offset(data_spec.offset as i64)
        .build()?;
    Ok((
        bytes,
        ColumnCloseResult {
            bytes_written: total as u64,
            rows_written: codes.len() as u64,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: None,
        },
    ))
}

/// Appends one run of the RLE / bit-packing hybrid encoding: `count` times `value`, stored in
/// ceil(width / 8) little-endian bytes.
fn rle_run(out: &mut Vec<u8>, count: usize, value: u32, width: u8) {
    let mut header = (count as u64) << 1;
    loop {
        let byte = (header & 0x7f) as u8;
        header >>= 7;
        if header == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
    let n = (width as usize).div_ceil(8);
    out.extend_from_slice(&value.to_le_bytes()[..n]);
}
